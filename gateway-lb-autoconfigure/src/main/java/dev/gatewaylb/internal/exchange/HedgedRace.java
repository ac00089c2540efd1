package dev.gatewaylb.internal.exchange;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.hedging.core.Hedging;
import dev.gatewaylb.internal.affinity.AffinitySession;
import dev.gatewaylb.internal.overload.Admission;
import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.web.server.ServerWebExchange;

/**
 * The sender of a service that hedges ({@code hedge.max-extra-load}), beside the single
 * send of the exchange's owner: one round of an exchange's attempts, the attempt and a
 * backup on another endpoint if the attempt is still waiting for its response headers
 * after the service's hedge delay. The first headers win: they are applied to the
 * exchange and the other attempt is cancelled, its in-flight claim released and nothing
 * charged to its endpoint (the gateway cancelled it, the endpoint did not fail). An
 * attempt that fails while the other still runs is charged its failure and the round
 * waits for the other; when the last one fails, its failure is the round's result. The
 * exchange's {@link Picks} pick both attempts; its owner decides what follows the round,
 * as it does for a single attempt: a round is at most two attempts, and a retry after it
 * is a new round. The race holds nothing of the owner: what it needs is handed over
 * ({@link Round.Of}).
 * <p>
 * Two threads may meet here: the event loop of the attempt's upstream connection, which
 * also runs the hedge timer, and the backup's; and a third, the client's, when it goes
 * away. They agree through one int, {@link #live}: the number of attempts still running,
 * or {@link #DONE} once the round is decided. The winner, the last failure or a
 * cancellation sets {@code DONE} with one atomic operation, so exactly one of them
 * decides. The timer publishes a backup in a volatile field before it joins by a
 * compare-and-set from a running count, so a backup never joins after the decision, and
 * whoever decides after it joined sees it and ends it; the backup then starts only from
 * new by a compare-and-set of its own, so one the decider ended first never starts. The
 * timer is cancelled the same way: written before {@code live} is read again. The
 * exchange itself (its lease, its attributes, its endpoints tried) is touched only by the
 * thread that decided, which goes on with it.
 * <p>
 * Longer than most classes here on purpose: the state machine and the argument that it is
 * safe under concurrency are kept in one class, so that every transition can be read
 * against the one int it changes.
 */
final class HedgedRace {

	private static final int DONE = -1;

	private static final int NEW = 0;

	private static final int STARTED = 1;

	private static final int ENDED = 2;

	private static final VarHandle LIVE;

	static {
		try {
			LIVE = MethodHandles.lookup().findVarHandle(HedgedRace.class, "live", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final Picks picks;

	private final Round.Of exchange;

	private final ServiceRuntime runtime;

	private final Hedging hedging;

	private final HedgeState hedges;

	private final MonoSink<Round> sink;

	@SuppressWarnings("unused") // accessed through LIVE
	private volatile int live = 1;

	private volatile @Nullable Lane primary;

	private volatile @Nullable Lane backup;

	private volatile @Nullable Future<?> timer;

	/**
	 * The error of the attempt that failed last, when the round ended with no headers.
	 */
	private volatile @Nullable Throwable failure;

	private HedgedRace(Picks picks, Round.Of exchange, ServiceRuntime runtime, Hedging hedging, MonoSink<Round> sink) {
		this.picks = picks;
		this.exchange = exchange;
		this.runtime = runtime;
		this.hedging = hedging;
		this.hedges = runtime.feature(HedgeState.class);
		this.sink = sink;
	}

	/**
	 * Runs one round of an exchange's attempts.
	 * @param picks the exchange's picks
	 * @param exchange what the round sends with
	 * @param runtime the service's runtime
	 * @param hedging the service's hedging
	 * @return the attempt whose headers came first, or the one that failed last with its
	 * error; a service with no endpoint to pick, or every endpoint at its limit, fails it
	 * with {@link NoPick#INSTANCE}
	 */
	static Mono<Round> run(Picks picks, Round.Of exchange, ServiceRuntime runtime, Hedging hedging) {
		return Mono.create((sink) -> new HedgedRace(picks, exchange, runtime, hedging, sink).start());
	}

	/**
	 * Starts the first attempt, when the round is subscribed.
	 */
	private void start() {
		this.sink.onCancel(this::cancel);
		Round.Of exchange = this.exchange;
		Attempt attempt = this.picks.pick(this.runtime, exchange.affinity(), exchange.admission(),
				exchange.firstSentNanos(), this::sent);
		if (attempt == null) {
			LIVE.setVolatile(this, DONE);
			this.sink.error(NoPick.INSTANCE);
			return;
		}
		if (exchange.firstRound()) {
			// Once per exchange, however many rounds it takes.
			this.hedging.requested(this.runtime.nanoTime());
		}
		Lane lane = new Lane(attempt, false, this.sink.contextView());
		this.primary = lane;
		lane.start();
	}

	/**
	 * The attempt's request is about to be sent: the hedge timer starts now, so that the
	 * delay and the latencies it comes from measure the same wait. The timer runs on the
	 * attempt's own connection's event loop, the thread calling this: scheduling there
	 * takes no lock and wakes no other thread, and the first attempt's answer, which
	 * cancels it in most rounds, arrives on that loop too.
	 */
	private void sent(Attempt attempt, EventLoop eventLoop) {
		if (this.timer != null) {
			return;
		}
		long delay = this.hedging.delayNanos();
		if (delay < 0 || (int) LIVE.getVolatile(this) == DONE) {
			return;
		}
		this.timer = eventLoop.schedule(this::backUp, delay, TimeUnit.NANOSECONDS);
		if ((int) LIVE.getVolatile(this) == DONE) {
			cancelTimer();
		}
	}

	/**
	 * The hedge timer fired: sends a backup to another endpoint if the attempt is still
	 * waiting, time is left before {@code timeouts.response}, another endpoint is there
	 * and the budget has room.
	 */
	private void backUp() {
		Lane first = this.primary;
		if ((int) LIVE.getVolatile(this) == DONE || first == null) {
			return;
		}
		long now = this.runtime.nanoTime();
		if (!Deadline.hasTimeLeft(this.runtime.settings().upstream().responseTimeout(),
				first.attempt.firstSentOfExchangeNanos(), now)) {
			return;
		}
		Attempt attempt = this.picks.pickBackup(this.runtime, first.attempt, this.hedging, now);
		if (attempt == null) {
			return;
		}
		Lane lane = new Lane(attempt, true, this.sink.contextView());
		// Published before the backup joins: whoever decides after it joined sees it.
		this.backup = lane;
		int running;
		do {
			running = (int) LIVE.getVolatile(this);
			if (running == DONE) {
				attempt.cancel();
				return;
			}
		}
		while (!LIVE.compareAndSet(this, running, running + 1));
		// The round may have been decided since: then the decider ended the lane first,
		// and it never starts.
		if (!lane.begin()) {
			return;
		}
		this.hedges.sent().increment();
		lane.start();
	}

	/**
	 * An attempt's response headers arrived: the first decides the round.
	 */
	private void headers(Lane lane) {
		if ((int) LIVE.getAndSet(this, DONE) == DONE) {
			// Lost by a hair, or the client went away: nobody will read this body.
			lane.exchange.discard();
			lane.attempt.cancel();
			return;
		}
		cancelTimer();
		Lane first = this.primary;
		Lane second = this.backup;
		if (lane == second) {
			this.hedges.won().increment();
			this.picks.triedAlso(second.attempt.endpoint().address());
			if (first != null) {
				lose(first, true);
			}
		}
		else if (second != null && lose(second, false)) {
			this.hedges.lost().increment();
			this.picks.triedAlso(second.attempt.endpoint().address());
		}
		lane.exchange.applyTo(this.exchange.exchange());
		decide(lane.attempt, null);
	}

	/**
	 * An attempt failed before its headers: the round waits for the other, unless this
	 * was the last one running.
	 */
	private void failed(Lane lane, Throwable error) {
		int running;
		do {
			running = (int) LIVE.getVolatile(this);
			if (running == DONE) {
				lane.attempt.cancel();
				return;
			}
			if (running == 1) {
				if (LIVE.compareAndSet(this, 1, DONE)) {
					cancelTimer();
					Lane second = this.backup;
					if (second != null && (second == lane || stop(second))) {
						// The backup failed, now or before the first attempt did.
						this.hedges.lost().increment();
						this.picks.triedAlso(second.attempt.endpoint().address());
					}
					decide(lane.attempt, error);
					return;
				}
			}
			else if (LIVE.compareAndSet(this, running, running - 1)) {
				// The other attempt still runs: this one is charged now and the round
				// waits.
				lane.attempt.failed(error);
				return;
			}
		}
		while (true);
	}

	/**
	 * The client went away, or the exchange was cancelled: nothing of the round may go
	 * on.
	 */
	private void cancel() {
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
			this.hedges.lost().increment();
		}
	}

	/**
	 * Makes the decided attempt the lease's and hands it on.
	 */
	private void decide(Attempt attempt, @Nullable Throwable error) {
		this.exchange.lease().hold(attempt);
		this.sink.success(new Round(attempt, error));
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
			long now = this.runtime.nanoTime();
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
		lane.attempt.cancel();
		lane.dispose();
		return started;
	}

	private void cancelTimer() {
		Future<?> scheduled = this.timer;
		if (scheduled != null) {
			scheduled.cancel(false);
		}
	}

	/**
	 * What a round came to: the attempt whose headers came first ({@code error} is
	 * {@code null}), or the one that failed last.
	 *
	 * @param attempt the attempt
	 * @param error its error, or {@code null}
	 */
	record Round(Attempt attempt, @Nullable Throwable error) {

		/**
		 * What a round sends with: the exchange as it stands when the round starts.
		 *
		 * @param exchange the exchange, which the winner's answer is applied to
		 * @param chain the rest of the chain, which each attempt runs
		 * @param lease the exchange's lease, which the winner's claim goes to
		 * @param affinity the exchange's endpoint affinity
		 * @param admission the exchange's admission
		 * @param firstSentNanos when the exchange's first request was sent, 0 if not yet
		 * @param firstRound whether this is the exchange's first round, which the hedge
		 * budget counts
		 */
		record Of(ServerWebExchange exchange, GatewayFilterChain chain, ExchangeLease lease, AffinitySession affinity,
				Admission admission, long firstSentNanos, boolean firstRound) {
		}

	}

	/**
	 * Says that a round's first pick found nothing: no endpoint, or every endpoint at its
	 * limit ({@link Admission#shed()} tells which). Never leaves the exchange, so it has
	 * no stack.
	 */
	static final class NoPick extends RuntimeException {

		static final NoPick INSTANCE = new NoPick();

		private NoPick() {
			super("no endpoint to pick", null, false, false);
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

		Lane(Attempt attempt, boolean backup, ContextView outer) {
			this.attempt = attempt;
			this.state = new AtomicInteger(backup ? NEW : STARTED);
			this.exchange = new AttemptExchange(HedgedRace.this.exchange.exchange(), backup);
			this.context = Context.of(outer);
			HedgedRace.this.picks.route(this.exchange, attempt);
		}

		/**
		 * Takes the backup from new to started.
		 * @return whether it may start: the round was not decided meanwhile
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
			HedgedRace.this.exchange.chain().filter(this.exchange).subscribe(this);
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
