package dev.gatewaylb.benchmarks.core;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.InFlightGuard;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.overload.ConcurrencySettings;
import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.overload.core.ConcurrencyLimits;
import dev.gatewaylb.benchmarks.Fixtures;
import dev.gatewaylb.benchmarks.core.PickBenchmark.KeyCursor;
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
 * A whole pick with its in-flight accounting, as one request costs it: select, acquire
 * (in-flight up, pick counted, the guard allocated) and release. With two threads the
 * endpoints' counters are shared and contended. With {@code limited}, every endpoint has
 * a concurrency limit it never reaches (the pick's check then reads a real limit), and
 * {@link #selectAcquireSampleRelease} adds what an attempt of a limited service adds: one
 * sample for the endpoint's limiter.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class InFlightBenchmark {

	@Param({ "ROUND_ROBIN", "LEAST_REQUESTS", "POWER_OF_TWO_CHOICES", "CONSISTENT_HASH", "PEAK_EWMA" })
	public Algorithm algorithm;

	@Param({ "100" })
	public int endpoints;

	@Param({ "false" })
	public boolean limited;

	private Balancer<Endpoint> balancer;

	/**
	 * A limited service's overload protection, where an attempt's limiter sample goes.
	 */
	private OverloadState overload;

	private String[] keys;

	private Load load;

	@Setup
	public void setUp() {
		this.balancer = Fixtures.balancer(this.algorithm, Fixtures.endpoints(this.endpoints, false));
		this.overload = OverloadState.FEATURE.next(null,
				new ConcurrencySettings(new ConcurrencyLimits(ConcurrencyLimits.Algorithm.GRADIENT2, 20, 1, 500), null,
						Map.of(), Duration.ZERO, ConcurrencySettings.NONE.maxWaitPerClient(),
						ConcurrencySettings.NONE.dropStatuses()),
				new Feature.Context("svc", System::nanoTime, System::currentTimeMillis));
		this.keys = (this.algorithm == Algorithm.CONSISTENT_HASH) ? Fixtures.clientAddresses()
				: new String[Fixtures.KEYS];
		this.load = Load.apply(this.balancer.snapshot(), 0);
		if (this.limited) {
			Snapshot<Endpoint> snapshot = this.balancer.snapshot();
			for (int i = 0; i < snapshot.size(); i++) {
				snapshot.state(i).concurrencyLimit(1_000_000);
			}
		}
	}

	@TearDown
	public void tearDown() {
		this.load.release();
	}

	@Benchmark
	public boolean selectAcquireRelease(KeyCursor cursor) {
		return cycle(cursor);
	}

	@Benchmark
	@Threads(2)
	public boolean selectAcquireReleaseTwoThreads(KeyCursor cursor) {
		return cycle(cursor);
	}

	@Benchmark
	public boolean selectAcquireSampleRelease(KeyCursor cursor) {
		Snapshot<Endpoint> snapshot = this.balancer.snapshot();
		InFlightGuard guard = snapshot.acquire(snapshot.select(cursor.next(this.keys)));
		this.overload.sample(guard.endpoint(), 20_000_000L, false);
		return guard.release();
	}

	private boolean cycle(KeyCursor cursor) {
		Snapshot<Endpoint> snapshot = this.balancer.snapshot();
		return snapshot.acquire(snapshot.select(cursor.next(this.keys))).release();
	}

}
