package dev.gatewaylb.internal.exchange;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.upstream.RequestBodyIdleException;
import org.jspecify.annotations.Nullable;
import dev.gatewaylb.internal.control.RequestClock;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The request body's idle limit on a clock the test moves: it counts the client's silence
 * while the reader waits, re-arms on every chunk without a timer per chunk, and leaves no
 * timer behind.
 */
class IdleLimitedBodyTests {

	private static final long MS = 1_000_000;

	private static final long IDLE = 1_000 * MS;

	private final ManualScheduler scheduler = new ManualScheduler();

	private final Sinks.Many<DataBuffer> client = Sinks.many().unicast().onBackpressureBuffer();

	private final AtomicBoolean clientCancelled = new AtomicBoolean();

	private final AtomicInteger idleCalls = new AtomicInteger();

	private final Reader reader = new Reader();

	private long minRate;

	private void subscribe(long initialDemand) {
		this.reader.initialDemand = initialDemand;
		new IdleLimitedBody(this.client.asFlux().doOnCancel(() -> this.clientCancelled.set(true)), IDLE, this.minRate,
				this.scheduler, this.idleCalls::incrementAndGet)
			.subscribe(this.reader);
	}

	@Test
	void endsTheBodyWhenTheClientSendsNothingForTheLimit() {
		subscribe(Long.MAX_VALUE);
		this.scheduler.advance(IDLE - MS);
		assertThat(this.reader.error).as("1 ms before the limit").isNull();

		this.scheduler.advance(MS);

		assertThat(this.reader.error).isInstanceOf(RequestBodyIdleException.class);
		assertThat(this.clientCancelled).as("the client's body is no longer read").isTrue();
		assertThat(this.idleCalls).hasValue(1);
		assertThat(this.scheduler.pending()).as("timers left").isZero();
	}

	@Test
	void measuresTheGapSinceTheLastChunkNotSinceTheStart() {
		subscribe(Long.MAX_VALUE);
		for (int i = 0; i < 10; i++) {
			this.scheduler.advance(200 * MS);
			chunk();
		}
		assertThat(this.reader.chunks).as("10 chunks 200 ms apart, 2 s in all").isEqualTo(10);
		assertThat(this.reader.error).isNull();
		assertThat(this.scheduler.scheduled()).as("timers scheduled for 10 chunks over two limits")
			.isLessThanOrEqualTo(3);

		this.scheduler.advance(IDLE - MS);
		assertThat(this.reader.error).as("1 ms before the limit after the last chunk").isNull();
		this.scheduler.advance(MS);
		assertThat(this.reader.error).isInstanceOf(RequestBodyIdleException.class);
	}

	@Test
	void doesNotCountTimeTheReaderAsksForNothing() {
		subscribe(1);
		chunk();
		// The upstream takes its time with the chunk: the client is held back, not idle.
		this.scheduler.advance(5 * IDLE);
		assertThat(this.reader.error).isNull();

		this.reader.request(1);
		this.scheduler.advance(IDLE - MS);
		assertThat(this.reader.error).as("1 ms before the limit after the reader asked again").isNull();
		this.scheduler.advance(MS);
		assertThat(this.reader.error).isInstanceOf(RequestBodyIdleException.class);
	}

	@Test
	void leavesNoTimerOnceTheBodyIsWhole() {
		subscribe(Long.MAX_VALUE);
		chunk();
		this.client.tryEmitComplete();

		assertThat(this.reader.completed).isTrue();
		assertThat(this.scheduler.pending()).isZero();
		this.scheduler.advance(10 * IDLE);
		assertThat(this.reader.error).isNull();
		assertThat(this.idleCalls).hasValue(0);
	}

	@Test
	void leavesNoTimerWhenTheReaderCancels() {
		subscribe(Long.MAX_VALUE);
		this.reader.cancel();

		assertThat(this.clientCancelled).isTrue();
		assertThat(this.scheduler.pending()).isZero();
		this.scheduler.advance(10 * IDLE);
		assertThat(this.idleCalls).hasValue(0);
	}

	@Test
	void passesTheClientsErrorOnAsItIs() {
		subscribe(Long.MAX_VALUE);
		IllegalStateException broken = new IllegalStateException("connection reset");
		this.client.tryEmitError(broken);

		assertThat(this.reader.error).isSameAs(broken);
		assertThat(this.scheduler.pending()).isZero();
	}

	@Test
	void endsABodyBelowTheMinimumRateOnceTheGraceHasPassed() {
		this.minRate = 1024;
		subscribe(Long.MAX_VALUE);
		// 10 bytes every 500 ms: never idle for the limit, far below 1 KB a second.
		for (int i = 0; i < 2; i++) {
			this.scheduler.advance(500 * MS);
			chunk();
		}
		assertThat(this.reader.error).as("within the grace").isNull();
		// The rate is looked at once a second: the body ends by 2 s, a second past
		// the grace.
		for (int i = 0; i < 2 && this.reader.error == null; i++) {
			this.scheduler.advance(500 * MS);
			if (this.reader.error == null) {
				chunk();
			}
		}
		assertThat(this.reader.error).isInstanceOf(RequestBodyIdleException.class)
			.hasMessageContaining("below 1024 bytes per second");
		assertThat(this.clientCancelled).isTrue();
		assertThat(this.idleCalls).hasValue(1);
		assertThat(this.scheduler.pending()).as("timers left").isZero();
	}

	@Test
	void keepsABodyThatAveragesTheMinimumRate() {
		this.minRate = 10;
		subscribe(Long.MAX_VALUE);
		// 20 bytes a second for 30 s.
		for (int i = 0; i < 60; i++) {
			this.scheduler.advance(500 * MS);
			chunk();
		}
		assertThat(this.reader.error).isNull();
		assertThat(this.reader.chunks).isEqualTo(60);
	}

	@Test
	void withoutAMinimumRateATrickleOnlyHasToBeatTheIdleLimit() {
		subscribe(Long.MAX_VALUE);
		for (int i = 0; i < 60; i++) {
			this.scheduler.advance(900 * MS);
			chunk();
		}
		assertThat(this.reader.error).isNull();
	}

	@Test
	void doesNotCountTimeTheReaderAsksForNothingAgainstTheRate() {
		this.minRate = 1024;
		subscribe(1);
		chunk();
		// The upstream takes its time with the chunk for 10 s: 10 KB at the rate, had it
		// counted.
		this.scheduler.advance(10 * IDLE);
		assertThat(this.reader.error).isNull();
		this.reader.request(1);
		this.scheduler.advance(500 * MS);
		chunk();
		assertThat(this.reader.error).isNull();
	}

	private void chunk() {
		this.client
			.tryEmitNext(DefaultDataBufferFactory.sharedInstance.wrap("0123456789".getBytes(StandardCharsets.UTF_8)))
			.orThrow();
	}

	static final class Reader extends BaseSubscriber<DataBuffer> {

		long initialDemand;

		int chunks;

		boolean completed;

		@Nullable Throwable error;

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
			subscription.request(this.initialDemand);
		}

		@Override
		protected void hookOnNext(DataBuffer value) {
			this.chunks++;
		}

		@Override
		protected void hookOnComplete() {
			this.completed = true;
		}

		@Override
		protected void hookOnError(Throwable throwable) {
			this.error = throwable;
		}

	}

	/**
	 * A scheduler whose delayed tasks run, on the test's thread, when the test moves its
	 * clock past them.
	 */
	static final class ManualScheduler implements RequestClock {

		private final List<Task> tasks = new ArrayList<>();

		private long now;

		private int scheduled;

		long nanos() {
			return this.now;
		}

		int scheduled() {
			return this.scheduled;
		}

		long pending() {
			return this.tasks.stream().filter((task) -> !task.isDisposed()).count();
		}

		void advance(long nanos) {
			long until = this.now + nanos;
			while (true) {
				Task next = this.tasks.stream()
					.filter((task) -> !task.isDisposed() && task.due <= until)
					.min((a, b) -> Long.compare(a.due, b.due))
					.orElse(null);
				if (next == null) {
					break;
				}
				this.now = next.due;
				this.tasks.remove(next);
				next.runnable.run();
			}
			this.now = until;
		}

		@Override
		public long nanoTime() {
			return this.now;
		}

		@Override
		public long currentTimeMillis() {
			return this.now / 1_000_000;
		}

		@Override
		public Timer schedule(Runnable task, long delay, TimeUnit unit) {
			Task scheduledTask = new Task(this.now + unit.toNanos(delay), task);
			this.tasks.add(scheduledTask);
			this.scheduled++;
			return scheduledTask::dispose;
		}

		static final class Task implements Disposable {

			final long due;

			final Runnable runnable;

			boolean disposed;

			Task(long due, Runnable runnable) {
				this.due = due;
				this.runnable = runnable;
			}

			@Override
			public void dispose() {
				this.disposed = true;
			}

			@Override
			public boolean isDisposed() {
				return this.disposed;
			}

		}

	}

}
