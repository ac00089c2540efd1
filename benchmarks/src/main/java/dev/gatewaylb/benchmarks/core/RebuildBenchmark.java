package dev.gatewaylb.benchmarks.core;

import java.util.List;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * A rebuild of one service's balancer, what a discovery change or a settings refresh
 * costs: carrying per-endpoint state over and building the algorithm's structure. For
 * {@code CONSISTENT_HASH} that is the ketama ring (160 points per endpoint: 16,000 and
 * 160,000 points); for {@code ROUND_ROBIN} the period table. Off the request path, but it
 * runs on the thread of the first request that sees the change.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class RebuildBenchmark {

	@Param({ "CONSISTENT_HASH", "ROUND_ROBIN" })
	public Algorithm algorithm;

	@Param({ "100", "1000" })
	public int endpoints;

	private Balancer<Endpoint> balancer;

	private List<Endpoint> list;

	@Setup
	public void setUp() {
		this.list = Fixtures.endpoints(this.endpoints, false);
		this.balancer = Fixtures.balancer(this.algorithm, this.list);
	}

	@Benchmark
	public Snapshot<Endpoint> update() {
		return this.balancer.update(this.list);
	}

}
