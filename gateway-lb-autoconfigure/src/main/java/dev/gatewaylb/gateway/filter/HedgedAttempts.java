package dev.gatewaylb.gateway.filter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.upstream.Outcome;
import dev.gatewaylb.gateway.upstream.UpstreamObserver;
import dev.gatewaylb.hedge.Hedging;
import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

/**
 * One round of attempts of an exchange whose service hedges
 * ({@code hedge.max-extra-load}): the attempt, and a backup on another endpoint if the
 * attempt is still waiting for its response headers after the service's hedge delay. The
 * first headers win: they are applied to the exchange and the other attempt is cancelled,
 * its in-flight claim released and nothing charged to its endpoint (the gateway cancelled
 * it, the endpoint did not fail). An attempt that fails while the other still runs is
 * charged its failure and the race waits for the other; when the last one fails, its
 * failure goes to the attempt filter's retry decision as any attempt's would. A round is
 * at most two attempts; a retry after it is a new round.
 * <p>
 * Two threads may meet here: the event loop of the attempt's upstream connection, which
 * also runs the hedge timer, and the backup's; and a third, the client's, when it goes
 * away. They agree through one int, {@link #live}: the number of attempts still running,
 * or {@link #DONE} once the race is decided. The winner, the last failure or a
 * cancellation sets {@code DONE} with one atomic operation, so exactly one of them
 * decides. The timer publishes a backup in a volatile field before it joins by a
 * compare-and-set from a running count, so a backup never joins after the decision, and
 * whoever decides after it joined sees it and ends it; the backup then starts only from
 * new by a compare-and-set of its own, so one the decider ended first never starts. The
 * timer is cancelled the same way: written before {@code live} is read again. The
 * exchange itself (its lease, its attributes) is touched only by the thread that decided,
 * which goes on with it.
 */
final class HedgedAttempts implements Consumer<MonoSink<Attempt>>, Function<Attempt, Mono<Void>>, Runnable, Disposable {

	private static final int DONE = -1;

	private static final int NEW = 0;

	private static final int STARTED = 1;

	private static final int ENDED = 2;

	private static final VarHandle LIVE;

	static {
		try {
			LIVE = MethodHandles.lookup().findVarHandle(HedgedAttempts.class, "live", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final AttemptFilter filter;

	private final ExchangeLease lease;

	private final ServiceRuntime runtime;

	private final Hedging hedging;

	@SuppressWarnings("unused") // accessed through LIVE
	private volatile int live = 1;

	private volatile @Nullable Lane primary;

	private volatile @Nullable Lane backup;

	private volatile @Nullable Future<?> timer;

	/**
	 * The error of the attempt that failed last, when the race ended with no headers.
	 */
	private volatile @Nullable Throwable failure;

	private @Nullable MonoSink<Attempt> sink;

	private HedgedAttempts(AttemptFilter filter, ExchangeLease lease, ServiceRuntime runtime, Hedging hedging) {
		this.filter = filter;
		this.lease = lease;
		this.runtime = runtime;
		this.hedging = hedging;
	}

	/**
	 * Runs one round of attempts of an exchange whose service hedges.
	 * @param filter the attempt filter, which picks and judges
	 * @param lease the exchange's lease
	 * @param runtime the service's runtime
	 * @param hedging the service's hedging
	 * @return completes as the attempt filter's handling of the winner, or of the last
	 * failure
	 */
	static Mono<Void> race(AttemptFilter filter, ExchangeLease lease, ServiceRuntime runtime, Hedging hedging) {
		HedgedAttempts race = new HedgedAttempts(filter, lease, runtime, hedging);
		return Mono.create(race).flatMap(race);
	}

	/**
	 * Starts the first attempt, when the round is subscribed.
	 * @param sink where the decision goes
	 */
	@Override
	public void accept(MonoSink<Attempt> sink) {
		this.sink = sink;
		sink.onCancel(this);
		Attempt attempt = this.filter.pick(this.lease, this.runtime);
		if (attempt == null) {
			LIVE.setVolatile(this, DONE);
			sink.error(this.filter.noEndpoint(this.runtime));
			return;
		}
		if (this.lease.attempts() == 1) {
			// Once per exchange, however many rounds it takes.
			this.hedging.requested(this.lease.runtimes().nanoTime());
		}
		Lane lane = new Lane(attempt, false, sink.contextView());
		this.primary = lane;
		lane.start();
	}

	/**
	 * The attempt's request is about to be sent: the hedge timer starts now, so that the
	 * delay and the latencies it comes from measure the same wait. The timer runs on the
	 * attempt's own connection's event loop, the thread calling this: scheduling there
	 * takes no lock and wakes no other thread, and the first attempt's answer, which
	 * cancels it in most races, arrives on that loop too.
	 * @param attempt the attempt, first or backup
	 * @param eventLoop the event loop of the attempt's connection
	 */
	void sent(Attempt attempt, EventLoop eventLoop) {
		Lane first = this.primary;
		if (first == null || first.attempt != attempt || this.timer != null) {
			return;
		}
		long delay = this.hedging.delayNanos();
		if (delay < 0 || (int) LIVE.getVolatile(this) == DONE) {
			return;
		}
		this.timer = eventLoop.schedule(this, delay, TimeUnit.NANOSECONDS);
		if ((int) LIVE.getVolatile(this) == DONE) {
			cancelTimer();
		}
	}

	/**
	 * The hedge timer fired: sends a backup to another endpoint if the attempt is still
	 * waiting, time is left before {@code timeouts.response}, another endpoint is there
	 * and the budget has room.
	 */
	@Override
	public void run() {
		if ((int) LIVE.getVolatile(this) == DONE) {
			return;
		}
		long now = this.lease.runtimes().nanoTime();
		if (!this.lease.hasTimeLeft(this.runtime, now)) {
			return;
		}
		Snapshot<Member> snapshot = this.runtime.snapshot();
		int index = snapshot.selectAvoiding(this.lease::tried);
		if (index < 0) {
			// No other endpoint: a backup to the same one would only double its load.
			return;
		}
		if (!this.hedging.tryBackup(now)) {
			this.runtime.counters().hedgesRefusedByBudget().increment();
			return;
		}
		Attempt attempt = AttemptFilter.claim(this.lease, this.runtime, snapshot, index);
		MonoSink<Attempt> sink = this.sink;
		Lane lane = new Lane(attempt, true, (sink != null) ? sink.contextView() : Context.empty());
		// Published before the backup joins: whoever decides after it joined sees it.
		this.backup = lane;
		int running;
		do {
			running = (int) LIVE.getVolatile(this);
			if (running == DONE) {
				attempt.abandon();
				attempt.release();
				return;
			}
		}
		while (!LIVE.compareAndSet(this, running, running + 1));
		// The race may have been decided since: then the decider cancelled the lane
		// first, and it never starts.
		if (!lane.begin()) {
			return;
		}
		this.runtime.counters().hedgesSent().increment();
		lane.start();
	}

	/**
	 * An attempt's response headers arrived: the first decides the race.
	 */
	void headers(Lane lane) {
		if ((int) LIVE.getAndSet(this, DONE) == DONE) {
			// Lost by a hair, or the client went away: nobody will read this body.
			lane.exchange.discard();
			lane.attempt.abandon();
			lane.attempt.release();
			return;
		}
		cancelTimer();
		Lane first = this.primary;
		Lane second = this.backup;
		if (lane == second) {
			this.runtime.counters().hedgesWon().increment();
			this.lease.triedAlso(second.attempt.endpoint().address());
			if (first != null) {
				lose(first, true);
			}
		}
		else if (second != null && lose(second, false)) {
			this.runtime.counters().hedgesLost().increment();
			this.lease.triedAlso(second.attempt.endpoint().address());
		}
		lane.exchange.applyTo(this.lease.exchange());
		this.lease.promote(lane.attempt);
		decide(lane.attempt);
	}

	/**
	 * An attempt failed before its headers: the race waits for the other, unless this was
	 * the last one running.
	 */
	void failed(Lane lane, Throwable error) {
		int running;
		do {
			running = (int) LIVE.getVolatile(this);
			if (running == DONE) {
				lane.attempt.abandon();
				lane.attempt.release();
				return;
			}
			if (running == 1) {
				if (LIVE.compareAndSet(this, 1, DONE)) {
					cancelTimer();
					Lane second = this.backup;
					if (second != null && (second == lane || stop(second))) {
						// The backup failed, now or before the first attempt did.
						this.runtime.counters().hedgesLost().increment();
						this.lease.triedAlso(second.attempt.endpoint().address());
					}
					this.failure = error;
					this.lease.promote(lane.attempt);
					decide(lane.attempt);
					return;
				}
			}
			else if (LIVE.compareAndSet(this, running, running - 1)) {
				// The other attempt still runs: this one is charged now and the race
				// waits.
				lane.attempt.settle(Outcome.classify(lane.attempt.phase(), error));
				lane.attempt.release();
				return;
			}
		}
		while (true);
	}

	/**
	 * The client went away, or the exchange was cancelled: nothing of the round may go
	 * on.
	 */
	@Override
	public void dispose() {
		if ((int) LIVE.getAndSet(this, DONE) == DONE) {
			return;
		}
		cancelTimer();
		Lane first = this.primary;
		Lane second = this.backup;
		if (first != null) {
			stop(first);
		}
		if (second != null && stop(second)) {
			this.runtime.counters().hedgesLost().increment();
		}
	}

	@Override
	public boolean isDisposed() {
		return (int) LIVE.getVolatile(this) == DONE;
	}

	/**
	 * Hands the decided attempt to the attempt filter, as the round's result.
	 */
	@Override
	public Mono<Void> apply(Attempt attempt) {
		Throwable error = this.failure;
		return (error != null) ? this.filter.afterError(attempt, error) : this.filter.afterHeaders(attempt);
	}

	private void decide(Attempt attempt) {
		MonoSink<Attempt> sink = this.sink;
		if (sink != null) {
			sink.success(attempt);
		}
	}

	/**
	 * Cancels the attempt that lost. Its endpoint is charged nothing; the first attempt,
	 * which lost to its backup, keeps a latency sample of what it had waited by then: a
	 * lower bound longer than the winner's whole answer, so it tells the truth about the
	 * endpoint being slow. A backup that lost had waited less than the winner, which says
	 * nothing about its endpoint, and keeps no sample.
	 */
	private boolean lose(Lane lane, boolean firstLost) {
		Attempt attempt = lane.attempt;
		if (firstLost && attempt.outcome() == null && attempt.startNanos() != 0) {
			long now = this.lease.runtimes().nanoTime();
			this.hedging.record(now - attempt.startNanos());
			if (this.runtime.recordsLatency()) {
				attempt.recordLatency(now);
			}
		}
		return stop(lane);
	}

	/**
	 * Stops a lane, whether it runs, failed already, or has not started yet (then it
	 * never will).
	 * @return whether the lane had started
	 */
	private boolean stop(Lane lane) {
		boolean started = lane.end();
		// Settled before the cancellation reaches the connection, so that what the
		// connection reports of it is charged to nobody.
		lane.attempt.abandon();
		lane.dispose();
		lane.attempt.release();
		return started;
	}

	private void cancelTimer() {
		Future<?> scheduled = this.timer;
		if (scheduled != null) {
			scheduled.cancel(false);
		}
	}

	/**
	 * One attempt of the round: its own exchange, and its subscription to the rest of the
	 * chain.
	 */
	private final class Lane extends BaseSubscriber<Void> {

		final Attempt attempt;

		final AttemptExchange exchange;

		/**
		 * {@link #NEW}, {@link #STARTED} or {@link #ENDED}: a backup starts only from
		 * new, by compare-and-set, so that a decider that ends it first keeps it from
		 * ever starting, and a backup that started is ended, and counted, exactly once.
		 */
		private final AtomicInteger state;

		private final Context context;

		Lane(Attempt attempt, boolean backup, reactor.util.context.ContextView outer) {
			this.attempt = attempt;
			this.state = new AtomicInteger(backup ? NEW : STARTED);
			this.exchange = new AttemptExchange(HedgedAttempts.this.lease.exchange(), attempt, backup);
			this.context = Context.of(outer).put(UpstreamObserver.CONTEXT_KEY, attempt);
			attempt.race(HedgedAttempts.this);
			HedgedAttempts.this.filter.route(this.exchange, HedgedAttempts.this.lease, attempt.member());
		}

		/**
		 * Takes the backup from new to started.
		 * @return whether it may start: the race was not decided meanwhile
		 */
		boolean begin() {
			return this.state.compareAndSet(NEW, STARTED);
		}

		/**
		 * Ends the lane, the first time only.
		 * @return whether it had started
		 */
		boolean end() {
			return this.state.getAndSet(ENDED) == STARTED;
		}

		void start() {
			HedgedAttempts.this.lease.chain().filter(this.exchange).subscribe(this);
		}

		@Override
		public Context currentContext() {
			return this.context;
		}

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
			subscription.request(Long.MAX_VALUE);
		}

		@Override
		protected void hookOnComplete() {
			headers(this);
		}

		@Override
		protected void hookOnError(Throwable error) {
			failed(this, error);
		}

	}

}
