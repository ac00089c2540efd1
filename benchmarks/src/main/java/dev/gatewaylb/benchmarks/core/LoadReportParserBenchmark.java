package dev.gatewaylb.benchmarks.core;

import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.loadreports.core.LoadReportParser;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Reading an ORCA {@code endpoint-load-metrics} header of five fields, as the event loop
 * does for every answer of a service that reads reports: TEXT ({@code text}, the issue's
 * target: at most 200 ns, and no allocation beyond the report), and the same report as
 * JSON ({@code json}). Run with {@code -prof gc} for the allocations: the report is one
 * object of 56 bytes and an empty map constant.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class LoadReportParserBenchmark {

	private final String text = "TEXT cpu_utilization=0.35, mem_utilization=0.62, application_utilization=0.41,"
			+ " rps_fractional=120.5, eps=0.25";

	private final String json = "JSON {\"cpu_utilization\": 0.35, \"mem_utilization\": 0.62,"
			+ " \"application_utilization\": 0.41, \"rps_fractional\": 120.5, \"eps\": 0.25}";

	@Benchmark
	public Object text() {
		return LoadReportParser.parse(this.text);
	}

	@Benchmark
	public Object json() {
		return LoadReportParser.parse(this.json);
	}

}
