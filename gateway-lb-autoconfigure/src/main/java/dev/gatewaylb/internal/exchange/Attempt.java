package dev.gatewaylb.internal.exchange;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.InFlightGuard;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.upstream.Outcome;
import dev.gatewaylb.internal.upstream.Upstreams;
import dev.gatewaylb.gateway.upstream.UpstreamObserver;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.hedging.core.Hedging;
import dev.gatewaylb.internal.observation.AttemptContext;
import dev.gatewaylb.internal.overload.OverloadState;
import io.micrometer.observation.Observation;
import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;

/**
 * One attempt of an exchange at one endpoint: its in-flight claim (it is the guard), what
 * its connection reported (how far it got, the status, when it was sent), and its
 * outcome, settled once. It is the {@link UpstreamObserver} of its request: the service's
 * client reports to it on the upstream connection's event loop.
 * <p>
 * One settle protocol. The outcome is settled by one compare-and-set, by whichever comes
 * first: the connection's own end ({@link #responseCompleted()},
 * {@link #responseFailed}), or one of four intents of the exchange for what only it sees:
 * {@link #answered} (the headers' status), {@link #failed} (an error before the headers),
 * {@link #cancel} (the gateway gives it up: a retry, a hedge that lost, a deadline of its
 * own) and {@link #clientFault} (the client went away or stalled its upload).
 * Classification happens here only. So an attempt is charged at most once: a retried 503
 * is not charged again when the gateway closes its connection, and a body cut by a client
 * that went away is charged to nobody. A copy sent to a shadow service is settled the
 * same way, by its own connection's events. The claim ends when the endpoint is done with
 * the request (its body arrived or the attempt ended), not when the gateway has finished
 * writing to the client: a client that sends its next request as soon as it has the
 * answer must not find the endpoint still busy with the last one.
 * <p>
 * Everything an attempt needs is given when it is made; it calls nothing back but its
 * endpoint's passive health and, for the first attempt of a hedged round, the hedge timer
 * it was given. A rollout's side is judged by the exchange's owner, which sees what the
 * client gets.
 */
public final class Attempt extends InFlightGuard implements UpstreamObserver {

	/**
	 * What a failed attempt's latency sample counts as at least: a failure that is fast
	 * must not make its endpoint look fast to peak-EWMA.
	 */
	static final long FAILURE_LATENCY_NANOS = 1_000_000_000L;

	/**
	 * The exchange attribute that names the attempt an exchange routes: the real
	 * exchange's for a single attempt, each hedged attempt's own exchange's in a race
	 * ({@link AttemptExchange}).
	 */
	public static final String ATTRIBUTE = Attempt.class.getName();

	private static final VarHandle SETTLED;

	private static final VarHandle BODY_JUDGE;

	static {
		try {
			SETTLED = MethodHandles.lookup().findVarHandle(Attempt.class, "settled", Outcome.Kind.class);
			BODY_JUDGE = MethodHandles.lookup().findVarHandle(Attempt.class, "bodyJudge", SplitDecision.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final ServiceRuntime runtime;

	/**
	 * The service's hedging, or {@code null}: the first attempt of a round feeds its
	 * delay.
	 */
	private final @Nullable Hedging hedging;

	/**
	 * The service's overload protection: its limiters' samples and its partitions.
	 */
	private final OverloadState overload;

	private final Member member;

	private final ExchangeLease lease;

	/**
	 * Whether a rollout judges the attempt, and so needs the time it was sent.
	 */
	private final boolean judged;

	/**
	 * When the exchange's first request was sent, by the balancer clock; 0 when this
	 * attempt is the first to be sent, or the time was not needed.
	 */
	private final long firstSentNanos;

	private final @Nullable SendListener sendListener;

	/**
	 * Whether the attempt went where the request's affinity cookie led: the client's
	 * choice of endpoint, so its latency is no sample of latency-based ejection.
	 */
	private final boolean followed;

	/**
	 * The partition of the service's concurrency limit the request counts in, or -1 when
	 * the service partitions nothing.
	 */
	private final int partition;

	/**
	 * The time to the response headers, in microseconds, for the endpoint's concurrency
	 * limiter; -1 until they arrive, or when the service limits nothing. An int, not a
	 * long of nanoseconds: the attempt is made per request and this keeps it at 96 bytes
	 * with its observation field (a limiter's samples need no finer grain, and 35 minutes
	 * is the most an int of microseconds holds, more than any header timeout).
	 */
	private int headersMicros = -1;

	private volatile Outcome.Phase phase = Outcome.Phase.CONNECTING;

	private volatile int status;

	@SuppressWarnings("unused") // accessed through SETTLED
	private volatile Outcome.@Nullable Kind settled;

	/**
	 * The rollout's side that counted the attempt's headers as a success, until the body
	 * ends: told if it breaks. Taken by one get-and-set, whoever comes second of
	 * {@link #judgeBody} and the settle, so the side hears of a broken body once.
	 */
	@SuppressWarnings("unused") // accessed through BODY_JUDGE
	private volatile @Nullable SplitDecision bodyJudge;

	/**
	 * The attempt's {@code gateway.lb.attempt} observation (its context an
	 * {@link AttemptContext}), or {@code null} when nothing observes attempts. Set before
	 * the attempt is held or sent ({@link #observe}), so that whatever thread ends its
	 * claim sees it; stopped by the one release.
	 */
	private @Nullable Observation observation;

	/**
	 * Creates an attempt on an endpoint whose in-flight count its snapshot has just
	 * raised.
	 * @param state the endpoint's state
	 * @param decayNanos the peak-EWMA decay of the service
	 * @param runtime the service's runtime
	 * @param member the endpoint
	 * @param lease the exchange's lease, which says whether the client went away
	 * @param judged whether a rollout judges the attempt (it needs the time it was sent)
	 * @param firstSentNanos when the exchange's first request was sent, 0 if not yet
	 * @param sendListener told when the request is sent, or {@code null}
	 * @param partition the partition of the concurrency limit the exchange counts in,
	 * already counted, or -1
	 * @param followed whether the endpoint is the one the request's affinity cookie named
	 */
	Attempt(EndpointState state, long decayNanos, ServiceRuntime runtime, Member member, ExchangeLease lease,
			boolean judged, long firstSentNanos, @Nullable SendListener sendListener, int partition, boolean followed) {
		super(state, decayNanos);
		this.followed = followed;
		this.partition = partition;
		this.runtime = runtime;
		this.hedging = runtime.feature(HedgeState.class).hedging();
		this.overload = runtime.feature(OverloadState.class);
		this.member = member;
		this.lease = lease;
		this.judged = judged;
		this.firstSentNanos = firstSentNanos;
		this.sendListener = sendListener;
	}

	public ServiceRuntime runtime() {
		return this.runtime;
	}

	Member member() {
		return this.member;
	}

	Outcome.Phase phase() {
		return this.phase;
	}

	/**
	 * Returns when the exchange's first request was sent: this attempt's
	 * ({@link #startNanos()}), if it was the first.
	 * @return the time, or 0 if not sent or the clock was not needed
	 */
	long firstSentOfExchangeNanos() {
		return (this.firstSentNanos != 0) ? this.firstSentNanos : startNanos();
	}

	/**
	 * Returns the Reactor context that carries this attempt to its client's callbacks.
	 */
	public Context context() {
		EventLoop loop = this.lease.eventLoop();
		// A request sent from another thread (a wake-up after max-wait, a timer) still
		// takes its connection on the exchange's loop.
		return (loop != null) ? Context.of(CONTEXT_KEY, this, Upstreams.CALLER_EVENT_LOOP, loop)
				: Context.of(CONTEXT_KEY, this);
	}

	/**
	 * Makes the attempt observed, before it is held by a lease or sent.
	 * @param observation its observation, started, its context an {@link AttemptContext}
	 */
	void observe(Observation observation) {
		this.observation = observation;
	}

	/**
	 * Returns the attempt's observation, or {@code null} when nothing observes it.
	 */
	@Nullable Observation observation() {
		return this.observation;
	}

	/**
	 * Returns the outcome, or {@code null} while the attempt is open.
	 */
	Outcome.@Nullable Kind outcome() {
		return this.settled;
	}

	@Override
	public @Nullable Duration requestPrepared(EventLoop eventLoop) {
		this.phase = Outcome.Phase.SENDING;
		boolean retries = this.runtime.settings().retry().attempts() > 0;
		boolean latency = this.runtime.recordsLatency() || this.hedging != null || this.judged || this.overload.limits()
				|| !this.runtime.settings().upstream().maxDuration().isZero();
		// The clock is read only when a retry's deadline, a latency sample, a hedge, a
		// rollout, a concurrency limiter or max-duration needs the time; it is then when
		// the request left, the latency sample's start.
		long now = (retries || latency || this.firstSentNanos != 0) ? this.runtime.nanoTime() : 0;
		start(now);
		if (this.firstSentNanos == 0 && retries) {
			// Once per exchange: the first request sent is what the budget is a share of.
			this.runtime.budget().requested(now);
		}
		SendListener listener = this.sendListener;
		if (listener != null) {
			listener.sent(this, eventLoop);
		}
		return Deadline.headerTimeout(this.runtime.settings().upstream().responseTimeout(), this.firstSentNanos, now);
	}

	@Override
	public void requestSent() {
		this.phase = Outcome.Phase.AWAITING_HEADERS;
	}

	@Override
	public void responseReceived(int status) {
		this.status = status;
		this.phase = Outcome.Phase.RECEIVING;
		Hedging hedging = this.hedging;
		boolean endpointLatency = this.runtime.recordsLatency();
		boolean limited = this.overload.limits();
		if (endpointLatency || hedging != null || limited) {
			long now = this.runtime.nanoTime();
			if (endpointLatency) {
				recordLatency(now);
			}
			if (hedging != null) {
				hedging.record(now - startNanos());
			}
			if (limited) {
				this.headersMicros = (int) Math.min(Integer.MAX_VALUE, (now - startNanos()) / 1_000);
			}
		}
	}

	@Override
	public void responseCompleted() {
		// The status decides even here: the owner may not have looked at it yet.
		end(Outcome.ofStatus(this.status, countsAsFailure(this.status)));
	}

	@Override
	public void responseFailed(Throwable error) {
		Outcome.Kind kind = failure(error);
		observeError(kind, error);
		end(kind);
	}

	/**
	 * Returns what a failure of this attempt is, wherever it is reported (the connection
	 * after the headers, the exchange before them): the client's doing, charged to
	 * nobody, once the lease says the client went away, whatever the error, so that the
	 * answer does not depend on which event loop heard first; otherwise what the error
	 * says at the attempt's phase ({@link Outcome#classify}).
	 */
	private Outcome.Kind failure(Throwable error) {
		return this.lease.isClientGone() ? Outcome.Kind.CLIENT_GONE : Outcome.classify(this.phase, error);
	}

	// What the exchange says of the attempt: one of four intents. The attempt classifies
	// them, settles its outcome once, and releases its claim; nothing outside does.

	/**
	 * The attempt's response headers reached the exchange: a failure status
	 * ({@code health.passive.on-statuses}) is charged to the endpoint now, while its body
	 * is still on its way.
	 * @param status the upstream's status
	 * @return the status's outcome
	 */
	Outcome.Kind answered(int status) {
		this.status = status;
		Outcome.Kind kind = Outcome.ofStatus(status, countsAsFailure(status));
		if (kind == Outcome.Kind.SERVER_ERROR) {
			settle(kind);
		}
		return kind;
	}

	/**
	 * A rollout's side counted the attempt's headers as a success: if its body breaks
	 * ({@link Outcome.Kind#BODY_FAILED}), before or after this call, the side counts an
	 * error for the client instead, who got a truncated answer.
	 * @param decision the split's decision: the side and the client on it
	 */
	void judgeBody(SplitDecision decision) {
		// Both sides write, then read the other's field (all volatile): at least one of
		// them sees the other, and the get-and-set lets only one tell the window.
		BODY_JUDGE.setVolatile(this, decision);
		if (SETTLED.getVolatile(this) == Outcome.Kind.BODY_FAILED) {
			bodyBroke();
		}
	}

	private void bodyBroke() {
		SplitDecision judge = (SplitDecision) BODY_JUDGE.getAndSet(this, null);
		if (judge != null) {
			judge.bodyBroke();
		}
	}

	/**
	 * The attempt failed before its headers reached the exchange: classified by how far
	 * it got and by what, or as the client's doing once it went away ({@link #failure}),
	 * charged, and ended.
	 * @param error what it failed with
	 * @return its outcome
	 */
	Outcome.Kind failed(Throwable error) {
		Outcome.Kind kind = failure(error);
		observeError(kind, error);
		end(kind);
		return kind;
	}

	/**
	 * Puts an error charged to the endpoint on the attempt's observation, if any.
	 */
	private void observeError(Outcome.Kind kind, Throwable error) {
		Observation observation = this.observation;
		if (observation != null && kind.charge() == Outcome.Charge.FAILURE) {
			observation.error(error);
		}
	}

	/**
	 * The gateway gives the attempt up (a retry, a hedge that lost, a deadline of its
	 * own, a route's own retry): whatever it has not settled yet is charged to nobody,
	 * and its claim ends.
	 */
	void cancel() {
		end(Outcome.Kind.CANCELLED);
	}

	/**
	 * The client is at fault: it went away ({@link Outcome.Kind#CLIENT_GONE}, noted on
	 * the lease so that what the endpoint does from now on is charged to nobody), or
	 * stalled its upload ({@link Outcome.Kind#REQUEST_BODY_IDLE}). Settled before what
	 * follows reaches the upstream connection, whose end would otherwise pass for the
	 * endpoint's failure; the claim stays until the connection is done.
	 * @param reason {@code CLIENT_GONE} or {@code REQUEST_BODY_IDLE}
	 */
	void clientFault(Outcome.Kind reason) {
		if (reason == Outcome.Kind.CLIENT_GONE) {
			this.lease.clientGone();
		}
		settle(reason);
	}

	/**
	 * Returns the time to the response headers in nanoseconds, or -1.
	 */
	private long headersNanos() {
		return (this.headersMicros >= 0) ? this.headersMicros * 1_000L : -1;
	}

	/**
	 * The endpoint accepted a WebSocket handshake (its 101 arrived): a success, charged
	 * now, the handshake's time its latency sample (taken with the 101). What follows is
	 * the session's, charged to nobody whichever side ends it and however: a session's
	 * life is no latency sample and its end no failure. The claim stays until the session
	 * ends ({@link #release()}).
	 */
	void upgraded() {
		settle(Outcome.Kind.SUCCESS);
	}

	/**
	 * Returns whether the service's passive health counts a status as the endpoint's
	 * failure ({@code health.passive.on-statuses}).
	 */
	private boolean countsAsFailure(int status) {
		return this.runtime.settings().health().passive().countsAsFailure(status);
	}

	/**
	 * Settles the outcome, the first time only, and charges the endpoint for it; the
	 * claim stays (a failure status's body is still on its way).
	 */
	private boolean settle(Outcome.Kind kind) {
		if (!SETTLED.compareAndSet(this, null, kind)) {
			return false;
		}
		switch (kind.charge()) {
			case SUCCESS -> {
				if (this.overload.limits()) {
					// A success once the whole body arrived, timed to its headers; a drop
					// still if its status is one of concurrency.drop-statuses (a 503 that
					// passive health does not count, say).
					this.overload.sample(endpoint(), headersNanos(), this.overload.settings().drops(this.status));
				}
				this.runtime.succeeded(endpoint());
			}
			case FAILURE -> {
				boolean limited = this.overload.limits();
				if (this.runtime.recordsLatency() || limited) {
					long now = this.runtime.nanoTime();
					if (this.runtime.recordsLatency()) {
						recordFailure(FAILURE_LATENCY_NANOS, now);
					}
					if (limited) {
						// A drop, timed to its headers, or to now when it failed before
						// them; one that never left has no time. An answer is a drop only
						// with a status of concurrency.drop-statuses: a 500 a client
						// provoked says nothing of the endpoint's load (it is still the
						// endpoint's failure for passive health).
						long rtt = (this.headersMicros >= 0) ? headersNanos()
								: (this.phase == Outcome.Phase.CONNECTING) ? -1 : now - startNanos();
						boolean drop = kind != Outcome.Kind.SERVER_ERROR || this.overload.settings().drops(this.status);
						this.overload.sample(endpoint(), rtt, drop);
					}
				}
				this.runtime.failed(endpoint());
				if (kind == Outcome.Kind.BODY_FAILED) {
					bodyBroke();
				}
			}
			case NOBODY -> {
				// Not the endpoint's doing: nothing for its health, no sample for its
				// limiter (a client that left, a hedge that lost, our own cancel).
			}
		}
		return true;
	}

	/**
	 * Returns whether the attempt's latency is a sample of latency-based ejection: only
	 * when the service has it on, and never for an attempt that followed an affinity
	 * cookie. A client holding one cookie could otherwise send all its slow requests (a
	 * query the application answers slowly) to one endpoint and make it look slow; such
	 * an attempt still feeds peak EWMA and the locality spill, where it is load the
	 * endpoint really carries, to be steered around rather than ejected.
	 */
	@Override
	protected boolean feedsLatencyEjection() {
		return !this.followed && this.runtime.settings().health().passive().ejectsSlowEndpoints();
	}

	/**
	 * Returns whether the attempt went where the request's affinity cookie led.
	 */
	boolean followed() {
		return this.followed;
	}

	@Override
	protected void released() {
		Observation observation = this.observation;
		if (observation != null) {
			stopObservation(observation);
		}
		int index = this.partition;
		if (index >= 0) {
			this.overload.partitions().release(index);
		}
		if (this.overload.limits()) {
			// The endpoint's place is free (released before this hook): a request waiting
			// for one (concurrency.max-wait) may take it. One read when none waits.
			this.overload.partitions().wakeOne();
		}
	}

	/**
	 * Stops the attempt's observation when its claim ends, with its outcome: the settled
	 * one, or, when the exchange's end released the claim before the connection settled
	 * it, what the attempt got as far as (an answer of a status passive health does not
	 * count: a success). A claim always ends, so no observation is left running, whatever
	 * the client or the gateway did.
	 */
	private void stopObservation(Observation observation) {
		if (!(observation.getContext() instanceof AttemptContext context)) {
			// A predicate of the registry turned it off: a no-op observation.
			return;
		}
		Outcome.Kind kind = (Outcome.Kind) SETTLED.getVolatile(this);
		if (kind == null) {
			boolean answered = this.phase == Outcome.Phase.RECEIVING && !countsAsFailure(this.status);
			context.ended(answered ? "success" : "cancelled", null);
		}
		else {
			switch (kind.charge()) {
				case SUCCESS -> context.ended("success", null);
				case FAILURE -> context.ended("failure", null);
				case NOBODY -> {
					if (kind == Outcome.Kind.SATURATED) {
						context.ended("shed", "pool-saturated");
					}
					else {
						context.ended("cancelled", reasonOf(kind));
					}
				}
			}
		}
		observation.stop();
	}

	/**
	 * Returns why an attempt was given up, for its observation.
	 */
	private static @Nullable String reasonOf(Outcome.Kind kind) {
		return switch (kind) {
			case CLIENT_GONE -> "client-gone";
			case REQUEST_BODY_IDLE -> "request-body-idle";
			default -> null;
		};
	}

	/**
	 * Ends the attempt: settles its outcome if nothing has, and releases its claim, the
	 * endpoint being done with it.
	 */
	private void end(Outcome.Kind kind) {
		settle(kind);
		release();
	}

	/**
	 * Hears that an attempt's request is about to be sent, on its connection's event
	 * loop: the first attempt of a hedged round arms the hedge timer there.
	 */
	@FunctionalInterface
	interface SendListener {

		/**
		 * Called when the attempt's request is about to be sent.
		 * @param attempt the attempt
		 * @param eventLoop the event loop of its connection, the calling thread
		 */
		void sent(Attempt attempt, EventLoop eventLoop);

	}

}
