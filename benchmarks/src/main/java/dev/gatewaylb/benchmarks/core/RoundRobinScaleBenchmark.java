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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Smooth weighted round-robin from 3 to 100,000 endpoints with weights 1 to 5, where
 * nginx's per-pick pass over every endpoint would cost O(n): the claim is that the
 * precomputed period keeps the pick flat. At 100,000 endpoints the period table (300,000
 * entries, 1.2 MB) no longer fits the L2 cache, which is the honest worst case.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class RoundRobinScaleBenchmark {

	@Param({ "3", "1000", "100000" })
	public int endpoints;

	private Balancer<Endpoint> balancer;

	@Setup
	public void setUp() {
		this.balancer = Fixtures.balancer(Algorithm.ROUND_ROBIN, Fixtures.endpoints(this.endpoints, true));
	}

	@Benchmark
	public int select() {
		return this.balancer.snapshot().select(null);
	}

	@Benchmark
	@Threads(2)
	public int selectTwoThreads() {
		return this.balancer.snapshot().select(null);
	}

}
