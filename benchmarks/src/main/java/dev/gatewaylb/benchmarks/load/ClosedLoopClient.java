package dev.gatewaylb.benchmarks.load;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The load client of the tail and locality scenarios: {@code connections} clients on
 * keep-alive connections, each sending its next GET when its answer arrived, first for
 * {@code warmup} seconds unrecorded, then for {@code seconds} recorded. Prints one
 * {@code RESULT} line in the format of {@code report.lua}, plus {@code all=}, the
 * requests of both phases, and {@code backends=}, the recorded answers by their
 * {@code X-Backend} header ({@code 18111:420,18112:415}, sorted; {@code -} when none had
 * it): which backend answered, as the client saw it.
 * <p>
 * Why not wrk, which the other scenarios use: wrk corrects its latencies for coordinated
 * omission (it adds the answers a constant-rate client would have waited for while a slow
 * one held the connection), so one 500 ms answer at 20 ms per request counts as 25. That
 * shows how long a closed-loop client was held up, but a target about the latency of
 * requests (p99 of answers, as in "The Tail at Scale") needs each answer counted once.
 * Latencies are recorded per answer, microseconds, three significant digits.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.gatewaylb.benchmarks.load.ClosedLoopClient
 * URL CONNECTIONS WARMUP_SECONDS SECONDS}
 */
public final class ClosedLoopClient {

	private ClosedLoopClient() {
	}

	public static void main(String[] args) throws InterruptedException {
		if (args.length != 4) {
			throw new IllegalArgumentException("usage: ClosedLoopClient URL CONNECTIONS WARMUP_SECONDS SECONDS");
		}
		String url = args[0];
		int connections = Integer.parseInt(args[1]);
		long warmupSeconds = Long.parseLong(args[2]);
		long seconds = Long.parseLong(args[3]);
		ConnectionProvider provider = ConnectionProvider.builder("closed-loop")
			.maxConnections(connections)
			.pendingAcquireMaxCount(-1)
			.build();
		HttpClient client = HttpClient.create(provider).responseTimeout(Duration.ofSeconds(10));
		Recorder latencies = new Recorder(1, 60_000_000L, 3);
		AtomicBoolean recording = new AtomicBoolean();
		AtomicBoolean running = new AtomicBoolean(true);
		LongAdder all = new LongAdder();
		AtomicLong errors = new AtomicLong();
		AtomicLong non2xx = new AtomicLong();
		Map<String, LongAdder> backends = new ConcurrentHashMap<>();
		Mono<Void> lanes = Flux.range(0, connections).flatMap((lane) -> Mono.defer(() -> {
			long start = System.nanoTime();
			return client.get()
				.uri(url)
				.responseSingle((response, body) -> body.then(Mono.fromSupplier(
						() -> new Answer(response.status().code(), response.responseHeaders().get("X-Backend")))))
				.doOnNext((answer) -> {
					all.increment();
					if (recording.get()) {
						latencies.recordValue(Math.min(60_000_000L, Math.max(1, (System.nanoTime() - start) / 1_000)));
						if (answer.status() < 200 || answer.status() > 299) {
							non2xx.incrementAndGet();
						}
						if (answer.backend() != null) {
							backends.computeIfAbsent(answer.backend(), (name) -> new LongAdder()).increment();
						}
					}
				})
				.onErrorResume((ex) -> {
					if (recording.get()) {
						errors.incrementAndGet();
					}
					return Mono.empty();
				})
				.then();
		}).repeat(running::get), connections).then();
		lanes.subscribe();
		Thread.sleep(warmupSeconds * 1_000);
		latencies.reset();
		recording.set(true);
		long from = System.nanoTime();
		Thread.sleep(seconds * 1_000);
		recording.set(false);
		long took = System.nanoTime() - from;
		running.set(false);
		Histogram histogram = latencies.getIntervalHistogram();
		StringBuilder answered = new StringBuilder();
		new TreeMap<>(backends).forEach((backend, count) -> answered.append((answered.length() > 0) ? "," : "")
			.append(backend)
			.append(':')
			.append(count.sum()));
		System.out.printf(
				"RESULT requests=%d rps=%.0f p50=%d p90=%d p99=%d p999=%d max=%d errors=%d non2xx=%d all=%d"
						+ " backends=%s%n",
				histogram.getTotalCount(), histogram.getTotalCount() / (took / 1e9), histogram.getValueAtPercentile(50),
				histogram.getValueAtPercentile(90), histogram.getValueAtPercentile(99),
				histogram.getValueAtPercentile(99.9), histogram.getMaxValue(), errors.get(), non2xx.get(), all.sum(),
				(answered.length() > 0) ? answered : "-");
		provider.disposeLater().block(Duration.ofSeconds(10));
		System.exit(0);
	}

	/**
	 * One answer: its status and the backend that says it answered.
	 */
	private record Answer(int status, @Nullable String backend) {
	}

}
