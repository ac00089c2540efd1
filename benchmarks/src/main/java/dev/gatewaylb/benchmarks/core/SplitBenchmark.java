package dev.gatewaylb.benchmarks.core;

import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.benchmarks.Fixtures;
import dev.gatewaylb.internal.request.Cookies;
import dev.gatewaylb.internal.split.StickyCookie;
import dev.gatewaylb.internal.split.Split;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a sticky canary split costs a request: reading the affinity cookie out of a
 * realistic {@code Cookie} header (four cookies, ours third), checking it, and the
 * weighted pick of a 95/5 split (and of a rollout's layout); and minting a value for a
 * client that has none.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Thread)
public class SplitBenchmark {

	private static final String COOKIE = "GWLB_AFFINITY";

	private final Split split = Split.of("shop",
			List.of(new Split.Target("shop-stable", 95), new Split.Target("shop-canary", 5)));

	/**
	 * A rollout's layout at 25%: two other targets (2:1) each hand the tail of their
	 * range to the canary, so the pick walks four segments instead of two targets.
	 */
	private final Split rollout = Split
		.of("shop", List.of(new Split.Target("shop-stable", 2), new Split.Target("shop-legacy", 1),
				new Split.Target("shop-canary", 0)))
		.withShare(2, 25);

	private final StickyCookie affinity = new StickyCookie(System::currentTimeMillis, 0x2a);

	private final String[] values = new String[Fixtures.KEYS];

	private final String[] headers = new String[Fixtures.KEYS];

	private int next;

	@Setup
	public void setUp() {
		for (int i = 0; i < Fixtures.KEYS; i++) {
			this.values[i] = this.affinity.mint();
			this.headers[i] = "_ga=GA1.2.1393216813.1700000000; theme=dark; " + COOKIE + "=" + this.values[i]
					+ "; SESSION=ZDFkNGE3YjQtYjE0Ny00ZDc0LWI1NDUtODQ3MGQyMzkwNzBh";
		}
	}

	@Benchmark
	public int splitPick() {
		return this.split.pick(this.values[this.next++ & (Fixtures.KEYS - 1)]);
	}

	@Benchmark
	public int rolloutPick() {
		return this.rollout.pick(this.values[this.next++ & (Fixtures.KEYS - 1)]);
	}

	@Benchmark
	public String cookieParse() {
		return Cookies.first(this.headers[this.next++ & (Fixtures.KEYS - 1)], COOKIE);
	}

	@Benchmark
	public boolean cookieValidate() {
		return StickyCookie.isValid(this.values[this.next++ & (Fixtures.KEYS - 1)]);
	}

	/**
	 * The split filter's work for a returning client: parse, validate, pick.
	 */
	@Benchmark
	public int stickyPick() {
		String value = Cookies.first(this.headers[this.next++ & (Fixtures.KEYS - 1)], COOKIE);
		return StickyCookie.isValid(value) ? this.split.pick(value) : -1;
	}

	@Benchmark
	public String mint() {
		return this.affinity.mint();
	}

}
