package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.LongFunction;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Lanes of clients that each send one GET after another until closed, noting each
 * answer's backend and latency, and the most endpoints seen ejected at once. Requests may
 * carry headers of their own, chosen by their number: a gateway that trusts loopback as a
 * proxy then sees them come from as many clients as {@code X-Forwarded-For} names.
 */
final class ClientLoad implements AutoCloseable {

	private final Queue<Sample> samples = new ConcurrentLinkedQueue<>();

	private final AtomicLong served = new AtomicLong();

	private final AtomicLong sent = new AtomicLong();

	/**
	 * The numbers of the requests sent and not yet answered, in the order they were sent.
	 */
	private final ConcurrentSkipListSet<Long> unanswered = new ConcurrentSkipListSet<>();

	private final AtomicInteger failures = new AtomicInteger();

	/**
	 * What the first few failures were (a status and its backend, or an error), for the
	 * message of a test that expected none.
	 */
	private final Queue<String> failureCauses = new ConcurrentLinkedQueue<>();

	private final AtomicInteger maxEjected = new AtomicInteger();

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final Disposable lanes;

	ClientLoad(GatewayClient client, String path, int lanes) {
		this(client, path, lanes, () -> 0);
	}

	ClientLoad(GatewayClient client, String path, int lanes, IntSupplier ejected) {
		this(client, path, lanes, ejected, (number) -> Map.of());
	}

	/**
	 * Sends each request as if from one of {@code clients} addresses in turn, through a
	 * proxy at the gateway's loopback.
	 */
	static ClientLoad fromClients(GatewayClient client, String path, int lanes, int clients) {
		return new ClientLoad(client, path, lanes, () -> 0, (number) -> Map.of("X-Forwarded-For",
				"10.77." + (number % clients) / 250 + "." + (1 + (number % clients) % 250)));
	}

	ClientLoad(GatewayClient client, String path, int lanes, IntSupplier ejected,
			LongFunction<Map<String, String>> headers) {
		this.lanes = Flux.range(0, lanes)
			.flatMap((lane) -> Mono.defer(() -> send(client, path, headers)).elapsed().doOnNext((timed) -> {
				GatewayClient.Answer answer = timed.getT2();
				if (answer.status() != 200) {
					fail(answer.status() + " from " + answer.backend() + ": " + answer.body());
				}
				this.samples.add(new Sample(answer.backend(), timed.getT1(), answer.backendDelayMillis()));
				this.maxEjected.accumulateAndGet(ejected.getAsInt(), Math::max);
				this.served.incrementAndGet();
			}).onErrorResume((ex) -> {
				fail(ex.toString());
				return Mono.empty();
			}).repeat(this.running::get), lanes)
			.subscribe();
	}

	private Mono<GatewayClient.Answer> send(GatewayClient client, String path,
			LongFunction<Map<String, String>> headers) {
		long number = this.sent.incrementAndGet();
		this.unanswered.add(number);
		return client.get(path, headers.apply(number)).doFinally((signal) -> this.unanswered.remove(number));
	}

	/**
	 * Waits until every request sent so far has its answer (or its error): a request
	 * picks its endpoint when it is sent, so after a change that new picks see, the
	 * requests that picked before it are then over, retries included.
	 */
	void awaitAnsweredSoFar() {
		long last = this.sent.get();
		org.awaitility.Awaitility.await()
			.atMost(Duration.ofSeconds(60))
			.until(() -> this.unanswered.headSet(last, true).isEmpty());
	}

	/**
	 * Waits until {@code count} more requests have been answered.
	 */
	void await(long count) {
		long start = this.served.get();
		org.awaitility.Awaitility.await()
			.atMost(Duration.ofSeconds(60))
			.until(() -> this.served.get() - start >= count);
	}

	/**
	 * Returns the next {@code count} answers.
	 */
	Window window(int count) {
		this.samples.clear();
		await(count);
		return new Window(new ArrayList<>(this.samples));
	}

	/**
	 * Returns the answers so far.
	 */
	long served() {
		return this.served.get();
	}

	int failures() {
		return this.failures.get();
	}

	/**
	 * Returns what the first ten failures were.
	 */
	List<String> failureCauses() {
		return List.copyOf(this.failureCauses);
	}

	private void fail(String cause) {
		if (this.failures.incrementAndGet() <= 10) {
			this.failureCauses.add(cause);
		}
	}

	int maxEjected() {
		return this.maxEjected.get();
	}

	/**
	 * Stops the lanes and waits until their requests in flight are answered or cancelled.
	 */
	@Override
	public void close() {
		this.running.set(false);
		this.lanes.dispose();
	}

	record Sample(String backend, long millis, long backendDelayMillis) {
	}

	record Window(List<Sample> samples) {

		double share(String backend) {
			return (double) count(backend) / this.samples.size();
		}

		long count(String backend) {
			return this.samples.stream().filter((sample) -> backend.equals(sample.backend())).count();
		}

		int size() {
			return this.samples.size();
		}

		/**
		 * Returns how many answers a backend gave after waiting {@code millis} or longer:
		 * the slow answers a test injected, told apart from answers a busy machine made
		 * slow.
		 */
		long countDelayedAtLeast(long millis) {
			return this.samples.stream().filter((sample) -> sample.backendDelayMillis() >= millis).count();
		}

		long percentileMillis(double percent) {
			long[] sorted = this.samples.stream().mapToLong(Sample::millis).sorted().toArray();
			return sorted[(int) Math.ceil(sorted.length * percent / 100) - 1];
		}

		long p99Millis() {
			return percentileMillis(99);
		}

		@Override
		public String toString() {
			Map<String, Long> counts = new TreeMap<>();
			this.samples.forEach((sample) -> counts.merge(sample.backend(), 1L, Long::sum));
			return this.samples.size() + " answers " + counts + ", p50 " + percentileMillis(50) + " ms, p99 "
					+ p99Millis() + " ms";
		}

	}

}
