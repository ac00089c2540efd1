package dev.gatewaylb.benchmarks.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

import io.netty.handler.codec.http.HttpHeaderNames;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.resources.ConnectionProvider;

/**
 * The load client of the overload scenario: an open loop, each phase {@code rate} GETs a
 * second for {@code seconds} whatever the answers do (users arrive; they do not wait for
 * each other's answers), each request given up after {@code patienceMillis} (the user
 * leaves, and the connection is closed). Phases run back to back in one JVM, so that a
 * first phase at a low rate measures the unloaded latency and warms this client up before
 * the overload is timed. A request counts in the phase that sent it.
 * <p>
 * Prints one line per phase once the last request was answered or given up:
 * {@code RESULT phase= rate= seconds= sent= ok= shed= unavailable= other= errors= gaveup=
 * p50= p90= p99= max=}: the 200s; the 503s with {@code Retry-After} (gateway-lb's shed
 * answer) and without (a full pool, no instance); other statuses; connection errors; the
 * requests given up; and the latency of the 200s in microseconds, three significant
 * digits. Goodput is {@code ok}: answers the user was still there for.
 * <p>
 * Why not wrk: wrk is a closed loop (a connection sends its next request when its answer
 * came), so an overloaded server slows the client down and is never offered more than it
 * serves; and wrk2's constant rate corrects latencies rather than counting the requests
 * the user gave up on.
 * <p>
 * With {@code --classes=A,B...} request {@code n} of a phase carries the header
 * {@code X-Class} with class {@code n mod k} (partitions of a concurrency limit, say),
 * and each phase prints one line per class, {@code RESULT phase= class= ...}, counted
 * apart.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.gatewaylb.benchmarks.load.OpenLoopClient
 * URL PATIENCE_MILLIS [--classes=A,B...] NAME:RATE:SECONDS...}, for example
 * {@code ... 1000 unloaded:60:6 overload:900:20}.
 */
public final class OpenLoopClient {

	private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(1);

	private OpenLoopClient() {
	}

	public static void main(String[] args) {
		if (args.length < 3) {
			throw new IllegalArgumentException("usage: OpenLoopClient URL PATIENCE_MILLIS NAME:RATE:SECONDS...");
		}
		String url = args[0];
		Duration patience = Duration.ofMillis(Long.parseLong(args[1]));
		int first = 2;
		List<String> classes = List.of();
		if (args[2].startsWith("--classes=")) {
			classes = List.of(args[2].substring("--classes=".length()).split(","));
			first = 3;
		}
		List<Phase> phases = new ArrayList<>();
		for (int i = first; i < args.length; i++) {
			Phase phase = Phase.parse(args[i]);
			phases.add(phase);
			for (String name : classes) {
				phase.classes.add(new Phase(phase.name, phase.rate, phase.seconds, name));
			}
		}
		// Enough connections that the client never queues: an open loop does not wait.
		ConnectionProvider provider = ConnectionProvider.builder("open-loop")
			.maxConnections(8192)
			.pendingAcquireMaxCount(-1)
			.build();
		HttpClient client = HttpClient.create(provider);
		// Flux.interval keeps a fixed rate (a late tick is followed by the next on time,
		// not a period later), so a pause of this JVM does not lower the offered load.
		Flux<Phase> ticks = Flux.concat(phases.stream()
			.map((phase) -> Flux.interval(Duration.ofNanos(1_000_000_000L / phase.rate))
				.take(phase.sent())
				.map((n) -> phase.classes.isEmpty() ? phase : phase.classes.get((int) (n % phase.classes.size()))))
			.toList());
		Duration total = phases.stream()
			.map((phase) -> Duration.ofSeconds(phase.seconds))
			.reduce(Duration.ZERO, Duration::plus);
		ticks.flatMap((phase) -> {
			long start = System.nanoTime();
			return client.headers((headers) -> {
				if (phase.className != null) {
					headers.set("X-Class", phase.className);
				}
			})
				.get()
				.uri(url)
				.responseSingle((response, body) -> body.then(Mono.fromSupplier(() -> Answer.of(response))))
				.timeout(patience)
				.doOnNext((answer) -> phase.answered(answer, System.nanoTime() - start))
				.onErrorResume((ex) -> {
					// A timeout is this client's patience running out; anything else
					// (refused, reset, closed early) is the server's failure.
					((ex instanceof TimeoutException) ? phase.gaveUp : phase.errors).increment();
					return Mono.empty();
				});
		}, Integer.MAX_VALUE).blockLast(total.plus(patience).plusSeconds(30));
		for (Phase phase : phases) {
			if (phase.classes.isEmpty()) {
				System.out.println(phase.result());
			}
			phase.classes.forEach((one) -> System.out.println(one.result()));
		}
		provider.disposeLater().block(Duration.ofSeconds(10));
		System.exit(0);
	}

	private record Answer(int status, boolean retryAfter) {

		static Answer of(HttpClientResponse response) {
			return new Answer(response.status().code(),
					response.responseHeaders().contains(HttpHeaderNames.RETRY_AFTER));
		}

	}

	/**
	 * One phase's load and what happened to it; with classes, what happened to each
	 * class's requests is a phase of its own, in {@link #classes}.
	 */
	private static final class Phase {

		private final String name;

		private final @Nullable String className;

		private final List<Phase> classes = new ArrayList<>();

		private final int rate;

		private final long seconds;

		private final LongAdder ok = new LongAdder();

		private final LongAdder shed = new LongAdder();

		private final LongAdder unavailable = new LongAdder();

		private final LongAdder other = new LongAdder();

		private final LongAdder errors = new LongAdder();

		private final LongAdder gaveUp = new LongAdder();

		private final Histogram latencies = new ConcurrentHistogram(MAX_MICROS, 3);

		private Phase(String name, int rate, long seconds, @Nullable String className) {
			this.name = name;
			this.rate = rate;
			this.seconds = seconds;
			this.className = className;
		}

		static Phase parse(String spec) {
			String[] fields = spec.split(":");
			if (fields.length != 3) {
				throw new IllegalArgumentException("phase: " + spec + " (expected: NAME:RATE:SECONDS)");
			}
			int rate = Integer.parseInt(fields[1]);
			long seconds = Long.parseLong(fields[2]);
			if (rate <= 0 || seconds <= 0) {
				throw new IllegalArgumentException("phase: " + spec + " (expected: a rate and seconds above 0)");
			}
			return new Phase(fields[0], rate, seconds, null);
		}

		long sent() {
			return this.rate * this.seconds;
		}

		/**
		 * Returns the requests this phase, or this class of it, sent.
		 */
		long counted() {
			return this.ok.sum() + this.shed.sum() + this.unavailable.sum() + this.other.sum() + this.errors.sum()
					+ this.gaveUp.sum();
		}

		void answered(Answer answer, long nanos) {
			if (answer.status() == 200) {
				this.ok.increment();
				this.latencies.recordValue(Math.min(MAX_MICROS, Math.max(1, nanos / 1_000)));
			}
			else if (answer.status() == 503) {
				(answer.retryAfter() ? this.shed : this.unavailable).increment();
			}
			else {
				this.other.increment();
			}
		}

		String result() {
			String phase = (this.className != null) ? this.name + " class=" + this.className : this.name;
			long sent = (this.className != null) ? counted() : sent();
			return String.format(
					"RESULT phase=%s rate=%d seconds=%d sent=%d ok=%d shed=%d unavailable=%d other=%d errors=%d"
							+ " gaveup=%d p50=%d p90=%d p99=%d max=%d",
					phase, this.rate, this.seconds, sent, this.ok.sum(), this.shed.sum(), this.unavailable.sum(),
					this.other.sum(), this.errors.sum(), this.gaveUp.sum(), this.latencies.getValueAtPercentile(50),
					this.latencies.getValueAtPercentile(90), this.latencies.getValueAtPercentile(99),
					this.latencies.getMaxValue());
		}

	}

}
