package dev.gatewaylb.benchmarks.core;

import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
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
 * Least-requests when no endpoint is idle, so that the pick reads every endpoint's
 * counter: the scan {@link PickBenchmark} cuts short at the first idle endpoint. Every
 * endpoint has 1 to 4 requests in flight.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class BusyScanBenchmark {

	@Param({ "100", "1000" })
	public int endpoints;

	private Balancer<Endpoint> balancer;

	private Load load;

	@Setup
	public void setUp() {
		this.balancer = Fixtures.balancer(Algorithm.LEAST_REQUESTS, Fixtures.endpoints(this.endpoints, false));
		this.load = Load.apply(this.balancer.snapshot(), 1);
	}

	@TearDown
	public void tearDown() {
		this.load.release();
	}

	@Benchmark
	public int leastRequestsSelect() {
		return this.balancer.snapshot().select(null);
	}

}
