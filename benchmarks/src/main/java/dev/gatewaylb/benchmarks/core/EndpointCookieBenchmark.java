package dev.gatewaylb.benchmarks.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.request.Cookies;
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
 * Following an endpoint affinity cookie as the first pick of a request does it: find the
 * cookie in a browser-like {@code Cookie} line, check its MAC, read its endpoint id and
 * find that endpoint in a snapshot of 10 ({@code follow}); the same without the snapshot
 * ({@code parseCheckAndRead}); and, in the same run, a round-robin pick of the same
 * snapshot without a cookie ({@code pickWithoutCookie}), the peer the ratio is taken
 * against. The target is 500 ns and two allocations for {@code follow}; run with
 * {@code -prof gc} for the allocations. {@code previous} checks a cookie signed with the
 * first previous secret, which costs a second MAC.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class EndpointCookieBenchmark {

	@Param({ "false", "true" })
	public boolean previous;

	private EndpointCookie cookie;

	private String line;

	private Snapshot<Endpoint> snapshot;

	@Setup
	public void setUp() {
		byte[] secret = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
		byte[] old = "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.UTF_8);
		this.cookie = new EndpointCookie("orders", secret, List.of(old), 86_400, EndpointCookieBenchmark::now);
		EndpointCookie signer = this.previous
				? new EndpointCookie("orders", old, List.of(), 86_400, EndpointCookieBenchmark::now) : this.cookie;
		String value = signer.sign(EndpointCookie.endpointId("10.0.0.7:8080"));
		this.line = "_ga=GA1.2.1234567890.1700000000; theme=dark; GWLB_ENDPOINT=" + value
				+ "; JSESSIONID=8F3C2A9E41D0B7F6";
		List<Endpoint> endpoints = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			endpoints.add(Endpoint.of("10.0.0." + i, 8080, 1));
		}
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS, Function.identity(), System::nanoTime,
				ThreadLocalRandom::current);
		this.snapshot = balancer.update(endpoints);
	}

	@Benchmark
	public int follow() {
		// As ProxiedExchange.follow reads it: in place, no copy of the value.
		long bounds = Cookies.bounds(this.line, "GWLB_ENDPOINT");
		if (bounds == Cookies.ABSENT || this.cookie.check(this.line, Cookies.start(bounds), Cookies.end(bounds)) < 0) {
			return -1;
		}
		return this.snapshot.follow(this.cookie.checkedEndpointId());
	}

	@Benchmark
	public int pickWithoutCookie() {
		return this.snapshot.select(null);
	}

	@Benchmark
	public long parseCheckAndRead() {
		String value = Cookies.first(this.line, "GWLB_ENDPOINT");
		if (value == null || this.cookie.check(value) < 0) {
			return -1;
		}
		return this.cookie.checkedEndpointId();
	}

	/**
	 * A fixed second, as a replica's clock would read it within a value's lifetime.
	 */
	static long now() {
		return 1_800_000_000L;
	}

	@Benchmark
	public String sign() {
		return this.cookie.sign(EndpointCookie.endpointId("10.0.0.7:8080"));
	}

}
