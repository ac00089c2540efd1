package dev.gatewaylb.benchmarks.core;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.Snapshot;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The pick of every algorithm as the gateway makes it: one read of the balancer's current
 * snapshot, then {@link Snapshot#select}. No in-flight accounting here (see
 * {@link InFlightBenchmark}), so the allocation column shows what the algorithm itself
 * allocates: it should be 0.
 * <p>
 * The balancer is built as production builds it ({@code System::nanoTime},
 * {@code ThreadLocalRandom::current}). Before measuring, every endpoint gets 0 to 3
 * requests in flight and, for peak-EWMA, a latency sample of 1 to 50 ms, so that
 * least-requests and the two-choice algorithms compare unequal numbers rather than a row
 * of zeros. Consistent hashing cycles through {@value Fixtures#KEYS} client addresses.
 * <p>
 * With idle endpoints among them, least-requests stops at the first idle one; its full
 * scan, every endpoint busy, is {@link BusyScanBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class PickBenchmark {

	@Param({ "ROUND_ROBIN", "LEAST_REQUESTS", "POWER_OF_TWO_CHOICES", "CONSISTENT_HASH", "PEAK_EWMA" })
	public Algorithm algorithm;

	@Param({ "3", "10", "100", "1000" })
	public int endpoints;

	private Balancer<Endpoint> balancer;

	private String[] keys;

	private Load load;

	@Setup
	public void setUp() {
		this.balancer = Fixtures.balancer(this.algorithm, Fixtures.endpoints(this.endpoints, false));
		this.keys = (this.algorithm == Algorithm.CONSISTENT_HASH) ? Fixtures.clientAddresses()
				: new String[Fixtures.KEYS];
		this.load = Load.apply(this.balancer.snapshot(), 0);
	}

	@TearDown
	public void tearDown() {
		this.load.release();
	}

	@Benchmark
	public int select(KeyCursor cursor) {
		return this.balancer.snapshot().select(cursor.next(this.keys));
	}

	@Benchmark
	@Threads(2)
	public int selectTwoThreads(KeyCursor cursor) {
		return this.balancer.snapshot().select(cursor.next(this.keys));
	}

	/**
	 * Each thread's position in the key array.
	 */
	@State(Scope.Thread)
	public static class KeyCursor {

		private int next;

		String next(String[] keys) {
			// KEYS is a power of two: a mask, not a division, keeps the cursor cheap
			return keys[this.next++ & (Fixtures.KEYS - 1)];
		}

	}

}
