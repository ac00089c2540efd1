package dev.gatewaylb.internal.exchange;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

import dev.gatewaylb.internal.control.RequestClock;
import dev.gatewaylb.internal.feature.AnswerWatcher;
import dev.gatewaylb.internal.upstream.Outcome;
import dev.gatewaylb.gateway.filter.InFlightReleaseFilter;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.netty.NettyOutbound;
import reactor.netty.channel.AbortedException;
import reactor.util.context.Context;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * The exchange's response as the gateway's body writer sees it, which tells the attempt
 * the lease holds two things no client callback can tell in time:
 * <ul>
 * <li>an error that the body publisher itself signals comes from the upstream (its
 * connection broke, or it went idle past {@code timeouts.body-idle}); an error writing to
 * the client does not come through here. The source of the error, not its type, tells
 * whose doing it was;</li>
 * <li>the body's end, before the client can see it: its last byte by the response's
 * {@code Content-Length}, or its completion, which the writer turns into the end of the
 * chunked message. The attempt's claim ends then, so a client that sends its next request
 * the moment it has this answer never finds the endpoint still counting this one in
 * flight. The upstream connection's own end comes later, on its event loop, and may come
 * after that next request was picked.</li>
 * <li>a client that accepts none of the answer for {@code timeouts.response-write-idle}
 * (nginx's {@code send_timeout}): the writer asks for more of the body as the client's
 * connection takes what it was given, so a writer that has asked for nothing that long
 * has a client that reads nothing. The body is then ended: the upstream connection is let
 * go, the client's closed, and nobody is charged.</li>
 * </ul>
 */
public final class UpstreamBodyResponse extends ServerHttpResponseDecorator {

	private static final System.Logger logger = System.getLogger(UpstreamBodyResponse.class.getName());

	private final ExchangeLease lease;

	/**
	 * Where write-idle timers run: shared, and asked only for a writer that ran out of
	 * demand.
	 */
	private final @Nullable RequestClock timers;

	/**
	 * The clock of a body no attempt answers, which has no write-idle limit: never read.
	 */
	private static final RequestClock NO_CLOCK = new RequestClock() {

		@Override
		public long nanoTime() {
			throw new IllegalStateException("no attempt, no write-idle limit");
		}

		@Override
		public long currentTimeMillis() {
			throw new IllegalStateException("no attempt, no write-idle limit");
		}

		@Override
		public Timer schedule(Runnable task, long delay, TimeUnit unit) {
			throw new IllegalStateException("no attempt, no write-idle limit");
		}

	};

	UpstreamBodyResponse(ServerHttpResponse delegate, ExchangeLease lease) {
		this(delegate, lease, null);
	}

	UpstreamBodyResponse(ServerHttpResponse delegate, ExchangeLease lease, @Nullable RequestClock timers) {
		super(delegate);
		this.lease = lease;
		this.timers = timers;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		return super.writeWith(new Body<DataBuffer>(Flux.from(body), this, getHeaders().getContentLength()));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		AnswerWatcher watcher = this.lease.watcher();
		if (watcher != null) {
			// Its chunks go by inside publishers the body's watcher does not open.
			watcher.streamed();
		}
		// A stream of flushed chunks: its end is the outer publisher's completion.
		return super.writeAndFlushWith(new Body<Publisher<? extends DataBuffer>>(Flux.from(body), this, -1));
	}

	/**
	 * Closes the client's connection (an h2 client's stream), for a client that reads
	 * nothing: its writes pending in the channel would otherwise keep the writer, and the
	 * exchange, waiting for ever. Closing fails them, and the writer ends with the
	 * channel. Returns {@code false} when the response is not Reactor Netty's.
	 */
	private boolean closeClient() {
		Object nativeResponse;
		try {
			nativeResponse = ServerHttpResponseDecorator.getNativeResponse(getDelegate());
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			// Not a server's response (Spring's mock throws the second).
			return false;
		}
		if (nativeResponse instanceof NettyOutbound netty) {
			netty.withConnection((connection) -> connection.channel().close());
			return true;
		}
		return false;
	}

	/**
	 * The body on its way to the writer, watched for its end and its errors.
	 */
	private static final class Body<T> extends FluxOperator<T, T> {

		private final ExchangeLease lease;

		private final long contentLength;

		private final UpstreamBodyResponse response;

		Body(Flux<? extends T> source, UpstreamBodyResponse response, long contentLength) {
			super(source);
			this.lease = response.lease;
			this.contentLength = contentLength;
			this.response = response;
		}

		@Override
		public void subscribe(CoreSubscriber<? super T> actual) {
			this.source.subscribe(new Watcher<>(actual, this.lease, this.contentLength, this.response::closeClient,
					this.response.timers));
		}

	}

	/**
	 * Passes the body on, ending the current attempt's claim at its last byte, and ends
	 * it when the client accepts nothing for {@code timeouts.response-write-idle}.
	 * Signals arrive one at a time (Reactive Streams' rule), so the byte count needs no
	 * synchronization.
	 * <p>
	 * The write-idle timer is armed only when the writer's demand runs out after the
	 * writer itself has asked: Spring's write barrier first asks for one chunk alone (to
	 * see the body's first signal before it commits the headers), and Reactor Netty's
	 * writer then asks for 128 and asks again as their writes complete. So the common
	 * answer, whose first chunk uses up the barrier's one, arms nothing, and a client
	 * that keeps reading never exhausts the writer's demand: one uncontended
	 * compare-and-set per chunk, no timer. Demand that runs out stamps the time and arms
	 * one timer (unless one is armed); the timer, on a shared scheduler, ends the body if
	 * the demand is still out and has been for the limit, sleeps for what is left of it,
	 * or disarms when demand came back (arming again if it ran out meanwhile); the body's
	 * end disposes of it, so that a timer never keeps a finished exchange in memory for
	 * the limit. The state word's compare-and-set makes the end happen once, and never
	 * while a signal of the body's own is on its way: the body has then completed or
	 * failed first.
	 */
	private static final class Watcher<T> implements CoreSubscriber<T>, Subscription, Runnable {

		private static final AtomicLongFieldUpdater<Watcher> REQUESTED = AtomicLongFieldUpdater
			.newUpdater(Watcher.class, "requested");

		private static final AtomicIntegerFieldUpdater<Watcher> ARMED = AtomicIntegerFieldUpdater
			.newUpdater(Watcher.class, "armed");

		private static final AtomicIntegerFieldUpdater<Watcher> DONE = AtomicIntegerFieldUpdater
			.newUpdater(Watcher.class, "done");

		private static final int OPEN = 0;

		/**
		 * Completed or failed by the body itself, or cancelled by the writer.
		 */
		private static final int ENDED = 1;

		/**
		 * Ended by the write-idle limit: what the body signals after it is dropped.
		 */
		private static final int CUT = 2;

		private final CoreSubscriber<? super T> actual;

		private final ExchangeLease lease;

		private long remaining;

		private @Nullable Subscription upstream;

		/**
		 * The write-idle limit, 0 for none; and the attempt whose body this is, which
		 * gives the clock and the counters.
		 */
		private final long writeIdleNanos;

		/**
		 * {@code timeouts.response-write-min-rate}, bytes a second, 0 for none.
		 */
		private final long minRate;

		/**
		 * How long the writer has waited for the client, over every stall that ended: the
		 * time the client was the bottleneck. Written by {@link #request} only (requests
		 * come one at a time, Reactive Streams' rule 2.7).
		 */
		private volatile long stalledNanos;

		/**
		 * Whether the writer's demand ran out and has not come back yet, as far as
		 * {@link #request} has seen: a request that finds it set ends a stall. A request
		 * racing the flag's setting misses a stall of a few instants: the rate then
		 * counts a little less time against the client, never more.
		 */
		private volatile boolean stalled;

		/**
		 * The bytes the client took since the writer first waited for it (the first
		 * chunks went out before anything could be slow); written by {@link #onNext}
		 * only.
		 */
		private long takenBytes;

		private final @Nullable Attempt attempt;

		/**
		 * Who watches the exchange's answer, shown the body as it goes by; set before the
		 * body is written, so read once here.
		 */
		private final @Nullable AnswerWatcher watcher;

		private volatile long requested;

		/**
		 * When the writer's demand last ran out.
		 */
		private volatile long exhaustedNanos;

		private volatile int armed;

		/**
		 * Whether demand beyond the write barrier's first one was asked for: only then
		 * can running out of it mean a client that does not read.
		 */
		private volatile boolean prefetched;

		private volatile boolean askedBefore;

		private volatile RequestClock.@Nullable Timer timer;

		/**
		 * The {@code timeouts.max-duration} timer, armed once as the body starts.
		 */
		private volatile RequestClock.@Nullable Timer durationTimer;

		private volatile int done;

		private final BooleanSupplier closeClient;

		private final RequestClock timers;

		Watcher(CoreSubscriber<? super T> actual, ExchangeLease lease, long contentLength, BooleanSupplier closeClient,
				@Nullable RequestClock timers) {
			this.actual = actual;
			this.lease = lease;
			this.remaining = contentLength;
			this.closeClient = closeClient;
			this.attempt = lease.current();
			// The attempt's service's clock, unless a test hands one in.
			this.timers = (timers != null) ? timers
					: (this.attempt != null) ? this.attempt.runtime().clock() : NO_CLOCK;
			this.watcher = lease.watcher();
			this.writeIdleNanos = (this.attempt != null)
					? this.attempt.runtime().settings().upstream().responseWriteIdleTimeout().toNanos() : 0;
			this.minRate = (this.attempt != null) ? this.attempt.runtime().settings().upstream().responseWriteMinRate()
					: 0;
		}

		@Override
		public Context currentContext() {
			return this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			this.upstream = subscription;
			armMaxDuration();
			this.actual.onSubscribe(this);
		}

		/**
		 * Arms the {@code timeouts.max-duration} timer for what is left of it since the
		 * exchange's request was first sent: an answer still streaming then is cut,
		 * charged to nobody. One timer per answer, and only with the limit set.
		 */
		private void armMaxDuration() {
			Attempt attempt = this.attempt;
			if (attempt == null) {
				return;
			}
			long maxNanos = attempt.runtime().settings().upstream().maxDuration().toNanos();
			if (maxNanos <= 0) {
				return;
			}
			long left = attempt.firstSentOfExchangeNanos() + maxNanos - this.timers.nanoTime();
			this.durationTimer = this.timers.schedule(this::pastMaxDuration, Math.max(0, left), TimeUnit.NANOSECONDS);
			if (this.done != OPEN) {
				// Ended while arming.
				cancelMaxDuration();
			}
		}

		private void pastMaxDuration() {
			Attempt attempt = this.attempt;
			if (this.done != OPEN || attempt == null) {
				return;
			}
			cut(attempt.runtime().counters().pastMaxDuration(), "max-duration", "still had its answer streaming "
					+ attempt.runtime().settings().upstream().maxDuration().toMillis() + " ms after its request");
		}

		private void cancelMaxDuration() {
			RequestClock.Timer current = this.durationTimer;
			if (current != null) {
				current.cancel();
			}
		}

		@Override
		public void onNext(T item) {
			AnswerWatcher watcher = this.watcher;
			if (watcher != null && item instanceof DataBuffer buffer) {
				watcher.body(buffer);
			}
			if (this.remaining > 0 && item instanceof DataBuffer buffer) {
				this.remaining -= buffer.readableByteCount();
				if (this.remaining <= 0) {
					ended();
					if (watcher != null) {
						// Whole by its Content-Length, before the client can have its
						// last
						// byte: a client that then leaves ends the exchange before the
						// body's completion comes, if it comes at all.
						watcher.bodyEnded();
					}
				}
			}
			if (this.stalledNanos > 0 && item instanceof DataBuffer buffer) {
				this.takenBytes += buffer.readableByteCount();
			}
			boolean belowRate = false;
			if (this.writeIdleNanos > 0 && Operators.produced(REQUESTED, this, 1) == 0 && this.prefetched) {
				// The writer has all it asked for: from now on it waits for the client.
				this.exhaustedNanos = this.timers.nanoTime();
				this.stalled = true;
				belowRate = belowMinRate();
				if (!belowRate) {
					arm(this.writeIdleNanos);
				}
			}
			this.actual.onNext(item);
			if (belowRate) {
				cut(this.attempt.runtime().counters().slowReadersBelowRate(), "response-write-min-rate",
						"took its answer at " + rate() + " bytes a second for " + this.stalledNanos / 1_000_000
								+ " ms of waiting");
			}
		}

		/**
		 * Returns whether the client, once the writer has waited for it longer than the
		 * grace ({@code response-write-idle}) over all its stalls, took its answer slower
		 * than {@code response-write-min-rate} on average over that waiting: a reader
		 * that takes a chunk now and then, never idle long enough for the idle limit,
		 * holds the upstream connection as surely as one that takes nothing.
		 */
		private boolean belowMinRate() {
			long stalled = this.stalledNanos;
			return this.minRate > 0 && stalled >= this.writeIdleNanos && rate() < this.minRate;
		}

		private long rate() {
			long stalled = this.stalledNanos;
			return (stalled > 0) ? (long) (this.takenBytes * 1e9 / stalled) : Long.MAX_VALUE;
		}

		@Override
		public void onError(Throwable error) {
			disarm();
			cancelMaxDuration();
			if (!end()) {
				// The upstream connection, let go by the limit, failing the body.
				return;
			}
			Attempt attempt = this.lease.current();
			if (attempt != null) {
				attempt.responseFailed(error);
			}
			this.actual.onError(error);
		}

		@Override
		public void onComplete() {
			disarm();
			cancelMaxDuration();
			if (!end()) {
				return;
			}
			ended();
			AnswerWatcher watcher = this.watcher;
			if (watcher != null) {
				watcher.bodyEnded();
			}
			this.actual.onComplete();
		}

		@Override
		public void request(long n) {
			if (this.writeIdleNanos > 0 && Operators.validate(n)) {
				// A first request of one is the write barrier's; any other is the
				// writer's. A benign race, between the barrier's request and the
				// writer's first: at worst a timer armed that was not needed.
				if (n > 1 || this.askedBefore) {
					this.prefetched = true;
				}
				this.askedBefore = true;
				if (Operators.addCap(REQUESTED, this, n) == 0 && this.stalled) {
					// The client took some: the writer waited for it since it ran out.
					this.stalled = false;
					long waited = this.timers.nanoTime() - this.exhaustedNanos;
					this.stalledNanos += Math.max(1, waited);
				}
			}
			Subscription upstream = this.upstream;
			if (upstream != null) {
				upstream.request(n);
			}
		}

		@Override
		public void cancel() {
			DONE.compareAndSet(this, OPEN, ENDED);
			disarm();
			cancelMaxDuration();
			Subscription upstream = this.upstream;
			if (upstream != null) {
				upstream.cancel();
			}
		}

		/**
		 * The write-idle timer.
		 */
		@Override
		public void run() {
			if (this.done != OPEN) {
				return;
			}
			if (this.requested > 0) {
				// The client took something and the writer asked again: disarm, then look
				// once more, for demand that ran out again before the flag was down.
				ARMED.set(this, 0);
				if (this.requested == 0) {
					arm(this.writeIdleNanos);
				}
				return;
			}
			Attempt attempt = this.attempt;
			long left = this.exhaustedNanos + this.writeIdleNanos - this.timers.nanoTime();
			if (left > 0) {
				schedule(left);
				return;
			}
			cut(attempt.runtime().counters().slowReaders(), "response-write-idle",
					"accepted no bytes for " + this.writeIdleNanos / 1_000_000 + " ms");
		}

		/**
		 * Ends the body for a client too slow to take it, once: the client's doing, noted
		 * before the upstream connection is let go, whose end would otherwise pass for a
		 * body that broke off. The writer ends with the client's channel, its pending
		 * writes failed; not Reactor Netty's, it is told as of a client that went away
		 * (which Spring logs at DEBUG).
		 */
		private void cut(LongAdder counter, String limit, String what) {
			if (!DONE.compareAndSet(this, OPEN, CUT)) {
				return;
			}
			Attempt attempt = this.attempt;
			attempt.clientFault(Outcome.Kind.CLIENT_GONE);
			counter.increment();
			disarm();
			cancelMaxDuration();
			Subscription upstream = this.upstream;
			if (upstream != null) {
				upstream.cancel();
			}
			logger.log(System.Logger.Level.DEBUG, () -> limit + ": the client of " + attempt.runtime().id() + " " + what
					+ "; closing its connection");
			if (!this.closeClient.getAsBoolean()) {
				this.actual.onError(new AbortedException(limit + ": the client " + what));
			}
		}

		/**
		 * Marks the body ended by its own signal; returns {@code false} when the limit
		 * ended it first, and the signal must not reach the writer.
		 */
		private boolean end() {
			return DONE.compareAndSet(this, OPEN, ENDED) || this.done != CUT;
		}

		private void arm(long delayNanos) {
			if (ARMED.compareAndSet(this, 0, 1)) {
				schedule(delayNanos);
			}
		}

		private void schedule(long delayNanos) {
			this.timer = this.timers.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
			if (this.done != OPEN) {
				// Ended while arming: the end may have missed this timer.
				disarm();
			}
		}

		/**
		 * Disposes of an armed timer: nothing to do unless the writer's demand ran out.
		 */
		private void disarm() {
			if (this.armed != 0) {
				RequestClock.Timer current = this.timer;
				if (current != null) {
					current.cancel();
				}
			}
		}

		private void ended() {
			Attempt attempt = this.lease.current();
			if (attempt != null) {
				attempt.release();
			}
		}

	}

	/**
	 * The exchange with this response: what {@link InFlightReleaseFilter} passes down the
	 * chain. One decorator, where {@code exchange.mutate()} would build a builder and a
	 * decorator per request.
	 */
	public static final class Exchange extends ServerWebExchangeDecorator {

		private final UpstreamBodyResponse response;

		public Exchange(ServerWebExchange delegate, ExchangeLease lease) {
			super(delegate);
			this.response = new UpstreamBodyResponse(delegate.getResponse(), lease);
		}

		@Override
		public ServerHttpResponse getResponse() {
			return this.response;
		}

	}

}
