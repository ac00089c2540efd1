package dev.gatewaylb.internal.exchange;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.gatewaylb.internal.upstream.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.mock.http.server.reactive.MockServerHttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The body on its way to the client ends the attempt's claim before the client can have
 * the whole answer, and an error of the body itself is the upstream's.
 */
class UpstreamBodyResponseTests {

	private final TwoEndpoints service = new TwoEndpoints();

	private final ExchangeLease lease = this.service.lease();

	private final Attempt attempt = this.service.attempt(this.lease, 0);

	/**
	 * The endpoint's in-flight count each time the client's connection is handed a chunk,
	 * and at the end.
	 */
	private final List<Integer> inFlightAtTheClient = new CopyOnWriteArrayList<>();

	UpstreamBodyResponseTests() {
		this.lease.hold(this.attempt);
		this.attempt.requestSent();
		this.attempt.responseReceived(200);
	}

	@AfterEach
	void close() {
		this.lease.close();
		assertThat(this.service.snapshot.state(0).inFlight()).isZero();
		this.service.close();
	}

	@Test
	void endsTheClaimBeforeTheClientIsHandedTheLastByteOfALengthDelimitedBody() {
		MockServerHttpResponse delegate = new MockServerHttpResponse();
		delegate.getHeaders().setContentLength(10);
		new UpstreamBodyResponse(watched(delegate), this.lease).writeWith(chunks("abcd", "efgh", "ij")).block();
		assertThat(this.inFlightAtTheClient).containsExactly(1, 1, 0, 0);
		assertThat(this.attempt.outcome()).as("settled by the connection's own end, later").isNull();
	}

	@Test
	void endsTheClaimWhenAChunkedBodyCompletesBeforeTheWriterEndsTheMessage() {
		MockServerHttpResponse delegate = new MockServerHttpResponse();
		new UpstreamBodyResponse(watched(delegate), this.lease).writeWith(chunks("abcd", "efgh")).block();
		assertThat(this.inFlightAtTheClient).containsExactly(1, 1, 0);
	}

	@Test
	void chargesAnErrorOfTheBodyItselfToTheEndpoint() {
		MockServerHttpResponse delegate = new MockServerHttpResponse();
		Flux<DataBuffer> broken = chunks("abcd").concatWith(Flux.error(new IOException("connection reset")));
		new UpstreamBodyResponse(watched(delegate), this.lease).writeWith(broken).onErrorComplete().block();
		assertThat(this.attempt.outcome()).isEqualTo(Outcome.Kind.BODY_FAILED);
		assertThat(this.service.snapshot.state(0).consecutiveFailures()).isEqualTo(1);
	}

	@Test
	void aClientThatReadsArmsNoWriteIdleTimer() {
		IdleLimitedBodyTests.ManualScheduler timers = new IdleLimitedBodyTests.ManualScheduler();
		// One chunk: the write barrier's one request uses it up, which is not the
		// writer running out.
		new UpstreamBodyResponse(new MockServerHttpResponse(), this.lease, timers).writeWith(chunks("abcd")).block();
		// Many: the writer's demand never runs out.
		new UpstreamBodyResponse(new MockServerHttpResponse(), this.lease, timers)
			.writeWith(chunks("a", "b", "c", "d", "e", "f"))
			.block();
		assertThat(timers.scheduled()).as("timers armed").isZero();
	}

	@Test
	void aWriterThatRunsOutOfDemandArmsOneTimerAndTheEndDisposesOfIt() {
		IdleLimitedBodyTests.ManualScheduler timers = new IdleLimitedBodyTests.ManualScheduler();
		StalledWriter writer = new StalledWriter();
		ServerHttpResponse stalled = new ServerHttpResponseDecorator(new MockServerHttpResponse()) {

			@Override
			public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
				body.subscribe(writer);
				return Mono.never();
			}

		};
		new UpstreamBodyResponse(stalled, this.lease, timers).writeWith(chunks("a", "b", "c", "d", "e", "f"))
			.subscribe();
		assertThat(writer.received).as("the barrier's one and the writer's two").isEqualTo(3);
		assertThat(timers.scheduled()).isOne();
		assertThat(timers.pending()).isOne();
		writer.dispose();
		assertThat(timers.pending()).as("timers left once the writer gave up").isZero();
	}

	@Test
	void aReaderThatTakesAChunkNowAndThenIsCutOnceItsAverageFallsBelowTheMinimumRate() {
		IdleLimitedBodyTests.ManualScheduler timers = new IdleLimitedBodyTests.ManualScheduler();
		TricklingWriter writer = new TricklingWriter();
		new UpstreamBodyResponse(trickled(writer), this.lease, timers).writeWith(kilobytes(100)).subscribe();
		assertThat(writer.received).as("the barrier's one and the writer's two").isEqualTo(3);
		// One kilobyte every 50 s: never idle for response-write-idle (60 s), 20 bytes a
		// second on average, far below response-write-min-rate (1KB).
		timers.advance(50_000_000_000L);
		writer.take(1);
		assertThat(writer.error).as("within the grace").isNull();
		timers.advance(50_000_000_000L);
		writer.take(1);
		assertThat(writer.error).as("past the grace, below the rate").isNotNull();
		assertThat(writer.error.getMessage())
			.startsWith("response-write-min-rate: the client took its answer at 20 bytes");
		assertThat(this.attempt.outcome()).as("the client's doing").isEqualTo(Outcome.Kind.CLIENT_GONE);
		assertThat(this.attempt.runtime().counters().slowReadersBelowRate().sum()).isOne();
		assertThat(this.attempt.runtime().counters().slowReaders().sum()).as("never idle that long").isZero();
		assertThat(this.service.snapshot.state(0).consecutiveFailures()).isZero();
		assertThat(timers.pending()).as("no timer left behind").isZero();
	}

	@Test
	void aSlowButSteadyReaderAboveTheMinimumRateIsNeverCut() {
		IdleLimitedBodyTests.ManualScheduler timers = new IdleLimitedBodyTests.ManualScheduler();
		TricklingWriter writer = new TricklingWriter();
		new UpstreamBodyResponse(trickled(writer), this.lease, timers).writeWith(kilobytes(1000)).subscribe();
		// Two kilobytes every second for five minutes.
		for (int second = 0; second < 300; second++) {
			timers.advance(1_000_000_000L);
			writer.take(2);
		}
		assertThat(writer.error).isNull();
		assertThat(writer.received).isEqualTo(3 + 600);
		assertThat(this.attempt.runtime().counters().slowReadersBelowRate().sum()).isZero();
		writer.dispose();
	}

	@Test
	void anAnswerStillStreamingAtMaxDurationIsCutAndChargesNobody() {
		try (TwoEndpoints limited = new TwoEndpoints(Map.of("gateway.lb.defaults.timeouts.max-duration", "10s"))) {
			ExchangeLease lease = limited.lease();
			Attempt attempt = limited.attempt(lease, 0);
			lease.hold(attempt);
			attempt.requestPrepared(null);
			attempt.requestSent();
			attempt.responseReceived(200);
			IdleLimitedBodyTests.ManualScheduler timers = new IdleLimitedBodyTests.ManualScheduler();
			// The timers' clock where the service's stands (the request was sent then).
			timers.advance(limited.runtime.nanoTime());
			TricklingWriter writer = new TricklingWriter();
			// A client that reads steadily (a kilobyte a second, never idle), of a stream
			// that never ends.
			new UpstreamBodyResponse(trickled(writer), lease, timers).writeWith(kilobytes(1_000_000)).subscribe();
			for (int second = 0; second < 9; second++) {
				timers.advance(1_000_000_000L);
				writer.take(1);
			}
			assertThat(writer.error).as("at 9 s").isNull();
			timers.advance(2_000_000_000L);
			assertThat(writer.error).as("past 10 s").isNotNull();
			assertThat(writer.error.getMessage()).startsWith("max-duration: ");
			assertThat(attempt.outcome()).isEqualTo(Outcome.Kind.CLIENT_GONE);
			assertThat(limited.runtime.counters().pastMaxDuration().sum()).isOne();
			assertThat(limited.snapshot.state(0).consecutiveFailures()).isZero();
			lease.close();
		}
	}

	@Test
	void withoutMaxDurationNoTimerIsArmedForAnAnswer() {
		IdleLimitedBodyTests.ManualScheduler timers = new IdleLimitedBodyTests.ManualScheduler();
		new UpstreamBodyResponse(new MockServerHttpResponse(), this.lease, timers)
			.writeWith(chunks("a", "b", "c", "d", "e", "f"))
			.block();
		assertThat(timers.scheduled()).isZero();
	}

	/**
	 * A writer that asks for one chunk, as Spring's write barrier does, then for two, and
	 * then only when the test lets the client take some: a client that reads now and
	 * then.
	 */
	static final class TricklingWriter extends reactor.core.publisher.BaseSubscriber<DataBuffer> {

		int received;

		Throwable error;

		@Override
		protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
			request(1);
		}

		@Override
		protected void hookOnNext(DataBuffer chunk) {
			this.received++;
			if (this.received == 1) {
				request(2);
			}
		}

		@Override
		protected void hookOnError(Throwable throwable) {
			this.error = throwable;
		}

		void take(int chunks) {
			request(chunks);
		}

	}

	private static ServerHttpResponse trickled(TricklingWriter writer) {
		return new ServerHttpResponseDecorator(new MockServerHttpResponse()) {

			@Override
			public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
				body.subscribe(writer);
				return Mono.never();
			}

		};
	}

	private static Flux<DataBuffer> kilobytes(int count) {
		return Flux.range(0, count).map((i) -> DefaultDataBufferFactory.sharedInstance.wrap(new byte[1024]));
	}

	/**
	 * A writer that asks for one chunk, as Spring's write barrier does, then for two, and
	 * then for nothing: a client that stopped reading.
	 */
	static final class StalledWriter extends reactor.core.publisher.BaseSubscriber<DataBuffer> {

		int received;

		@Override
		protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
			request(1);
		}

		@Override
		protected void hookOnNext(DataBuffer chunk) {
			this.received++;
			if (this.received == 1) {
				request(2);
			}
		}

	}

	private ServerHttpResponse watched(MockServerHttpResponse delegate) {
		return new ServerHttpResponseDecorator(delegate) {

			@Override
			public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
				return super.writeWith(Flux.from(body)
					.doOnNext((chunk) -> record())
					.doOnComplete(UpstreamBodyResponseTests.this::record));
			}

		};
	}

	private void record() {
		this.inFlightAtTheClient.add(this.service.snapshot.state(0).inFlight());
	}

	private static Flux<DataBuffer> chunks(String... chunks) {
		return Flux.fromArray(chunks)
			.map((chunk) -> DefaultDataBufferFactory.sharedInstance.wrap(chunk.getBytes(StandardCharsets.UTF_8)));
	}

}
