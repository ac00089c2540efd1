package dev.gatewaylb.benchmarks.core;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.benchmarks.Fixtures;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The consistent-hash pick with {@code hash-balance-factor} 0 (plain ketama) and 1.25
 * (bounded loads), over {@value Fixtures#KEYS} client addresses, as {@link PickBenchmark}
 * measures it: {@code balancer.snapshot().select(key)}, no in-flight accounting, so the
 * allocation column is the pick's own.
 * <p>
 * {@code IDLE}: nothing in flight, so with bounded loads every key's owner is idle and
 * taken without summing the counts. {@code BUSY}: every endpoint holds 1 to 4 requests
 * (seeded), so every bounded pick sums all the counts, and the keys whose owner holds 4
 * (the bound is {@code ceil(1.25 x average)}, 4 for an average near 2.5) walk the ring to
 * the next endpoint under it. Plain ketama ignores the load; its two rows show the noise.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class BoundedHashBenchmark {

	@Param({ "0", "1.25" })
	public double factor;

	@Param({ "IDLE", "BUSY" })
	public String load;

	@Param({ "3", "10", "100", "1000" })
	public int endpoints;

	private Balancer<Endpoint> balancer;

	private String[] keys;

	private Load held;

	@Setup
	public void setUp() {
		this.balancer = new Balancer<>(
				BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH).withHashBalanceFactor(this.factor),
				Function.identity(), System::nanoTime, ThreadLocalRandom::current);
		this.balancer.update(Fixtures.endpoints(this.endpoints, false));
		this.keys = Fixtures.clientAddresses();
		this.held = "BUSY".equals(this.load) ? Load.apply(this.balancer.snapshot(), 1) : null;
	}

	@TearDown
	public void tearDown() {
		if (this.held != null) {
			this.held.release();
		}
	}

	@Benchmark
	public int select(PickBenchmark.KeyCursor cursor) {
		return this.balancer.snapshot().select(cursor.next(this.keys));
	}

}
