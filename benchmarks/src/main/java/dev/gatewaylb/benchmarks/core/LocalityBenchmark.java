package dev.gatewaylb.benchmarks.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.LevelSettings;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The pick of six endpoints in two zones with localities on (a level drawn, then the
 * algorithm inside it) against the same pick without them, in the same run: what
 * {@code locality.enabled} adds to a request. Issue 23's target: at most 20 ns more.
 * {@code twoLocalDown} ejects two of the three local endpoints, so that the draw sends
 * about half of the picks to the other zone; otherwise every pick stays in the zone.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class LocalityBenchmark {

	@Param({ "ROUND_ROBIN", "LEAST_REQUESTS", "CONSISTENT_HASH", "PEAK_EWMA" })
	public Algorithm algorithm;

	@Param({ "false", "true" })
	public boolean locality;

	@Param({ "false", "true" })
	public boolean twoLocalDown;

	private Balancer<Endpoint> balancer;

	private String[] keys;

	private Load load;

	@Setup
	public void setUp() {
		List<Endpoint> endpoints = new ArrayList<>();
		for (int i = 1; i <= 6; i++) {
			endpoints.add(Endpoint.of("10.0." + ((i <= 3) ? 1 : 2) + "." + i, 8080, 1)
				.at((i <= 3) ? "zone-a" : "zone-b", Endpoint.NO_PRIORITY));
		}
		LevelSettings zones = this.locality ? new LevelSettings(true, "zone-a", 1.4, 0.5, false) : LevelSettings.NONE;
		this.balancer = new Balancer<>(BalancerSettings.DEFAULTS.withAlgorithm(this.algorithm).withLevels(zones),
				Function.identity(), System::nanoTime, ThreadLocalRandom::current);
		this.balancer.update(endpoints);
		if (this.twoLocalDown) {
			long now = System.nanoTime();
			this.balancer.snapshot().state(0).eject(now, now + TimeUnit.HOURS.toNanos(1));
			this.balancer.snapshot().state(1).eject(now, now + TimeUnit.HOURS.toNanos(1));
			this.balancer.reevaluate();
		}
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

}
