package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;

import io.netty.handler.codec.http.HttpHeaderNames;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * An open-loop client: requests at a fixed rate whatever the answers do (as users
 * arrive), each given up after the client's patience. Counts every answer by status,
 * times the answered ones, and counts what it gave up on; a request's class (a partition
 * header, say) comes from its sequence number.
 */
final class OpenLoad {

	private final HttpClient client;

	private final ConnectionProvider connections;

	private volatile boolean stopped;

	private OpenLoad(int port) {
		// Enough connections that the client never queues: an open loop does not wait.
		this.connections = ConnectionProvider.builder("open-load")
			.maxConnections(4096)
			.pendingAcquireMaxCount(-1)
			.build();
		this.client = HttpClient.create(this.connections).host("127.0.0.1").port(port);
	}

	static OpenLoad to(int port) {
		return new OpenLoad(port);
	}

	/**
	 * Sends {@code perSecond} requests a second for {@code duration}, or until
	 * {@link #stop()}, and waits for the last answer (or the last request's patience).
	 * @param path the path
	 * @param perSecond the rate
	 * @param duration how long
	 * @param patience how long a client waits for its answer before it goes away
	 * @param classOf the class of request {@code n}, sent as the header {@code X-Class}
	 * and counted apart; {@code null} sends no header
	 * @return what happened, by class
	 */
	Map<String, Result> run(String path, int perSecond, Duration duration, Duration patience,
			IntFunction<String> classOf) {
		Map<String, Result> results = new ConcurrentHashMap<>();
		long count = perSecond * duration.toMillis() / 1000;
		long periodNanos = 1_000_000_000L / perSecond;
		Flux.interval(Duration.ofNanos(periodNanos)).take(count).takeWhile((n) -> !this.stopped).flatMap((n) -> {
			String type = classOf.apply(n.intValue());
			Result result = results.computeIfAbsent(type, (t) -> new Result());
			long start = System.nanoTime();
			return this.client.headers((headers) -> headers.set("X-Class", type))
				.get()
				.uri(path)
				.responseSingle((response, body) -> body.asString()
					.defaultIfEmpty("")
					.map((text) -> new Answer(response.status().code(),
							response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER))))
				.timeout(patience)
				.doOnNext((answer) -> result.answered(answer, System.nanoTime() - start))
				.onErrorResume((error) -> {
					result.gaveUp.increment();
					return Mono.empty();
				});
		}, Integer.MAX_VALUE).blockLast(duration.plus(patience).plusSeconds(30));
		return results;
	}

	/**
	 * Sends no more requests: a {@link #run} in progress returns once the requests sent
	 * are answered or given up.
	 */
	void stop() {
		this.stopped = true;
	}

	void close() {
		this.connections.disposeLater().block(Duration.ofSeconds(10));
	}

	record Answer(int status, String retryAfter) {
	}

	/**
	 * What happened to one class of requests.
	 */
	static final class Result {

		final LongAdder ok = new LongAdder();

		final LongAdder shed = new LongAdder();

		final LongAdder other = new LongAdder();

		final LongAdder gaveUp = new LongAdder();

		final LongAdder shedWithoutRetryAfter = new LongAdder();

		/**
		 * Latency of the 200s, in microseconds.
		 */
		final Histogram latency = new ConcurrentHistogram(TimeUnit.MINUTES.toMicros(1), 3);

		void answered(Answer answer, long nanos) {
			if (answer.status() == 200) {
				this.ok.increment();
				this.latency.recordValue(Math.min(nanos / 1000, TimeUnit.MINUTES.toMicros(1)));
			}
			else if (answer.status() == 503) {
				this.shed.increment();
				if (!"1".equals(answer.retryAfter())) {
					this.shedWithoutRetryAfter.increment();
				}
			}
			else {
				this.other.increment();
			}
		}

		long sent() {
			return this.ok.sum() + this.shed.sum() + this.other.sum() + this.gaveUp.sum();
		}

		double p50Millis() {
			return this.latency.getValueAtPercentile(50) / 1000.0;
		}

		double p99Millis() {
			return this.latency.getValueAtPercentile(99) / 1000.0;
		}

		@Override
		public String toString() {
			return "ok " + this.ok.sum() + ", shed " + this.shed.sum() + ", other " + this.other.sum() + ", gave up "
					+ this.gaveUp.sum() + ", p50 " + p50Millis() + " ms, p99 " + p99Millis() + " ms";
		}

	}

}
