package dev.gatewaylb.internal.exchange;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

import dev.gatewaylb.internal.upstream.RequestBodyIdleException;
import dev.gatewaylb.internal.control.RequestClock;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * A request body that ends in {@link RequestBodyIdleException} when its client sends
 * nothing for {@code idle} while the reader is waiting for it: from the subscription to
 * the first chunk, between two chunks, and from the reader asking for more to the next
 * chunk. Time during which the reader asks for nothing (the upstream is slow to take what
 * it was sent, and the client is held back by TCP) is not the client's silence and does
 * not count.
 * <p>
 * Cheaper than {@code Flux.timeout(Duration)}, which schedules and cancels one timer per
 * chunk: this one keeps a single timer per request on the request clock, and a chunk only
 * stamps the clock. When the timer fires it looks at the stamp and, if the client sent
 * something meanwhile, sleeps again for what is left of the limit (Netty's
 * {@code ReadTimeoutHandler} works the same way). A body that keeps arriving costs one
 * timer per {@code idle} period, however many chunks it has.
 * <p>
 * With a minimum rate ({@code timeouts.request-body-min-rate}), the body must also
 * average that many bytes per second once the idle limit has passed as a grace (Apache's
 * {@code mod_reqtimeout} rule: each second's worth of bytes at the rate buys a second
 * more), so that a client sending one byte just under the idle limit cannot hold the
 * connection for ever. Time during which the reader asks for nothing does not count here
 * either; the timer then wakes every second, and a timer run that finds no demand counts
 * the time since the previous run as the reader's pause.
 * <p>
 * When a limit passes, the body's source is cancelled, {@code onIdle} runs, and the
 * reader gets the error: the routing client fails the attempt and lets go of its
 * connection.
 * <p>
 * Chunks arrive on the client connection's event loop; demand comes from the upstream
 * connection's; the timer runs on the request clock's timer. They meet without a lock:
 * one state word changed by compare-and-set lets the timer end the body only while no
 * chunk is being passed on, so the reader never sees a chunk and the error at once, and
 * never a chunk after the error.
 */
final class IdleLimitedBody extends Flux<DataBuffer> {

	private final Flux<DataBuffer> source;

	private final long idleNanos;

	private final RequestClock clock;

	private final Runnable onIdle;

	private final long minRate;

	/**
	 * How often the timer looks at the rate once it is measured.
	 */
	static final long RATE_TICK_NANOS = 1_000_000_000L;

	/**
	 * Creates the body.
	 * @param source the client's body
	 * @param idleNanos the idle limit, above 0, and the grace before the rate counts
	 * @param minRate the slowest average rate after the grace, in bytes per second; 0 for
	 * none
	 * @param clock the request clock: its time, and where the timer runs (shared, never a
	 * thread per request)
	 * @param onIdle called once, on the clock's timer, when a limit passes, before the
	 * reader gets the error
	 */
	IdleLimitedBody(Flux<DataBuffer> source, long idleNanos, long minRate, RequestClock clock, Runnable onIdle) {
		this.source = source;
		this.idleNanos = idleNanos;
		this.minRate = minRate;
		this.clock = clock;
		this.onIdle = onIdle;
	}

	@Override
	public void subscribe(CoreSubscriber<? super DataBuffer> actual) {
		this.source.subscribe(new IdleSubscriber(actual, this));
	}

	static final class IdleSubscriber implements CoreSubscriber<DataBuffer>, Subscription, Runnable {

		/**
		 * No chunk is being passed on: the timer may end the body.
		 */
		private static final int WAITING = 0;

		/**
		 * A chunk is being passed on to the reader.
		 */
		private static final int EMITTING = 1;

		/**
		 * Completed, failed, cancelled or timed out.
		 */
		private static final int DONE = 2;

		private static final AtomicIntegerFieldUpdater<IdleSubscriber> STATE = AtomicIntegerFieldUpdater
			.newUpdater(IdleSubscriber.class, "state");

		private static final AtomicLongFieldUpdater<IdleSubscriber> REQUESTED = AtomicLongFieldUpdater
			.newUpdater(IdleSubscriber.class, "requested");

		private final CoreSubscriber<? super DataBuffer> actual;

		private final IdleLimitedBody parent;

		private @Nullable Subscription upstream;

		private volatile int state;

		/**
		 * Chunks the reader asked for and has not had yet.
		 */
		private volatile long requested;

		/**
		 * When the body last moved: subscribed, a chunk arrived, or the reader asked for
		 * more.
		 */
		private volatile long lastNanos;

		private volatile RequestClock.@Nullable Timer timer;

		/**
		 * The bytes passed on so far; written by {@link #onNext} alone (signals are
		 * serial), read by the timer.
		 */
		private volatile long bytes;

		/**
		 * When the body was subscribed to.
		 */
		private long subscribedNanos;

		/**
		 * The reader's pauses so far, and when the timer last ran: the timer's alone.
		 */
		private long pausedNanos;

		private long lastRunNanos;

		IdleSubscriber(CoreSubscriber<? super DataBuffer> actual, IdleLimitedBody parent) {
			this.actual = actual;
			this.parent = parent;
		}

		@Override
		public Context currentContext() {
			return this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription s) {
			if (Operators.validate(this.upstream, s)) {
				this.upstream = s;
				this.lastNanos = this.parent.clock.nanoTime();
				this.subscribedNanos = this.lastNanos;
				this.lastRunNanos = this.lastNanos;
				this.actual.onSubscribe(this);
				arm(this.parent.idleNanos);
			}
		}

		@Override
		public void onNext(DataBuffer chunk) {
			int was = this.state;
			if (was == DONE || (was == WAITING && !STATE.compareAndSet(this, WAITING, EMITTING))) {
				// Timed out or cancelled: the reader is gone.
				DataBufferUtils.release(chunk);
				return;
			}
			// was == EMITTING: the reader asked for more from inside onNext and the
			// source answered at once, on this thread; the outer call resets the state.
			this.lastNanos = this.parent.clock.nanoTime();
			this.bytes = this.bytes + chunk.readableByteCount();
			Operators.produced(REQUESTED, this, 1);
			this.actual.onNext(chunk);
			if (was == WAITING) {
				STATE.compareAndSet(this, EMITTING, WAITING);
			}
		}

		@Override
		public void onError(Throwable error) {
			if (STATE.getAndSet(this, DONE) != DONE) {
				disarm();
				this.actual.onError(error);
			}
			else {
				Operators.onErrorDropped(error, currentContext());
			}
		}

		@Override
		public void onComplete() {
			if (STATE.getAndSet(this, DONE) != DONE) {
				disarm();
				this.actual.onComplete();
			}
		}

		@Override
		public void request(long n) {
			if (Operators.validate(n)) {
				// Stamped before the demand is published: a timer that sees the demand
				// sees this stamp too, and does not count the time without demand.
				this.lastNanos = this.parent.clock.nanoTime();
				Operators.addCap(REQUESTED, this, n);
				upstream().request(n);
			}
		}

		@Override
		public void cancel() {
			if (STATE.getAndSet(this, DONE) != DONE) {
				disarm();
			}
			upstream().cancel();
		}

		/**
		 * The timer: ends the body if the client has been silent for the whole limit
		 * while the reader waited, or below the minimum rate since the grace, or sleeps
		 * again until the next limit could pass.
		 */
		@Override
		public void run() {
			if (this.state == DONE) {
				return;
			}
			long idle = this.parent.idleNanos;
			// Demand first, then the stamp: request() writes them the other way round.
			boolean waiting = this.requested != 0;
			long now = this.parent.clock.nanoTime();
			long minRate = this.parent.minRate;
			if (minRate > 0) {
				if (!waiting) {
					this.pausedNanos += now - this.lastRunNanos;
				}
				this.lastRunNanos = now;
			}
			long next = idle;
			if (waiting && this.state == WAITING) {
				long left = this.lastNanos + idle - now;
				if (left <= 0) {
					end(new RequestBodyIdleException(Duration.ofNanos(idle)));
					return;
				}
				next = left;
			}
			if (minRate > 0) {
				long active = now - this.subscribedNanos - this.pausedNanos;
				long sent = this.bytes;
				if (waiting && this.state == WAITING && active > idle
						&& sent < (double) (active - idle) / 1_000_000_000L * minRate) {
					end(RequestBodyIdleException.belowRate(sent, active, minRate));
					return;
				}
				next = Math.min(next, RATE_TICK_NANOS);
			}
			arm(next);
		}

		/**
		 * Ends the body with the error, unless a chunk is passing or the body ended just
		 * now.
		 */
		private void end(RequestBodyIdleException error) {
			if (!STATE.compareAndSet(this, WAITING, DONE)) {
				arm(this.parent.idleNanos);
				return;
			}
			upstream().cancel();
			this.parent.onIdle.run();
			this.actual.onError(error);
		}

		private void arm(long delayNanos) {
			if (this.state == DONE) {
				return;
			}
			RequestClock.Timer next = this.parent.clock.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
			this.timer = next;
			if (this.state == DONE) {
				// Ended while arming: a terminal signal may have missed this timer.
				next.cancel();
			}
		}

		private void disarm() {
			RequestClock.Timer current = this.timer;
			if (current != null) {
				current.cancel();
			}
		}

		private Subscription upstream() {
			Subscription s = this.upstream;
			if (s == null) {
				throw new IllegalStateException("not subscribed");
			}
			return s;
		}

	}

}
