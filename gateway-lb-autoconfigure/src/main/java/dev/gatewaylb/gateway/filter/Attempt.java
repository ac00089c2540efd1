package dev.gatewaylb.gateway.filter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.gatewaylb.balance.EndpointState;
import dev.gatewaylb.balance.InFlightGuard;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.upstream.Outcome;
import dev.gatewaylb.gateway.upstream.UpstreamObserver;
import dev.gatewaylb.hedge.Hedging;
import dev.gatewaylb.rollout.RolloutWindow;
import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * One attempt of an exchange at one endpoint: its in-flight claim (it is the guard), how
 * far it got, and its outcome, settled once.
 * <p>
 * The attempt filter and the upstream connection's event loop both report what they see
 * (the filter: an error before the headers, a status to retry; the connection: headers, a
 * body that arrived whole or broke off). Whichever settles first decides the outcome, by
 * one compare-and-set, so an attempt is charged at most once: a retried 503 is not
 * charged again when the gateway closes its connection, and a body cut by a client that
 * went away is charged to nobody.
 */
final class Attempt extends InFlightGuard
		implements UpstreamObserver, Supplier<Mono<Void>>, Function<Throwable, Mono<Void>> {

	/**
	 * What a failed attempt's latency sample counts as at least: a failure that is fast
	 * must not make its endpoint look fast to peak-EWMA.
	 */
	static final long FAILURE_LATENCY_NANOS = 1_000_000_000L;

	/**
	 * The attribute that carries an attempt on the exchange of a hedged attempt
	 * ({@link AttemptExchange}): two attempts of one exchange run at once there, so the
	 * lease's current attempt does not say which one a request belongs to.
	 */
	static final String ATTRIBUTE = Attempt.class.getName();

	private static final VarHandle SETTLED;

	static {
		try {
			SETTLED = MethodHandles.lookup().findVarHandle(Attempt.class, "settled", Outcome.Kind.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final ExchangeLease lease;

	private final ServiceRuntime runtime;

	private final Member member;

	private volatile Outcome.Phase phase = Outcome.Phase.CONNECTING;

	private volatile int status;

	/**
	 * The race this attempt runs in when its service hedges; written before the attempt
	 * is subscribed, so every callback of its request sees it.
	 */
	private @Nullable HedgedAttempts race;

	@SuppressWarnings("unused") // accessed through SETTLED
	private volatile Outcome.@Nullable Kind settled;

	Attempt(EndpointState state, long decayNanos, ExchangeLease lease, ServiceRuntime runtime, Member member) {
		super(state, decayNanos);
		this.lease = lease;
		this.runtime = runtime;
		this.member = member;
	}

	ExchangeLease lease() {
		return this.lease;
	}

	ServiceRuntime runtime() {
		return this.runtime;
	}

	Member member() {
		return this.member;
	}

	Outcome.Phase phase() {
		return this.phase;
	}

	void race(HedgedAttempts race) {
		this.race = race;
	}

	/**
	 * Returns the Reactor context that carries this attempt to its client's callbacks.
	 */
	Context context() {
		return Context.of(CONTEXT_KEY, this);
	}

	/**
	 * Returns the outcome, or {@code null} while the attempt is open.
	 */
	Outcome.@Nullable Kind outcome() {
		return this.settled;
	}

	/**
	 * Continues the exchange once the rest of the chain completed: the attempt is its own
	 * step, so an attempt allocates no lambda for it.
	 * @return what the attempt filter makes of the headers
	 */
	@Override
	public Mono<Void> get() {
		return this.lease.filter().afterHeaders(this);
	}

	/**
	 * Continues the exchange after an error of the rest of the chain.
	 * @param error the error
	 * @return what the attempt filter makes of it
	 */
	@Override
	public Mono<Void> apply(Throwable error) {
		return this.lease.filter().afterError(this, error);
	}

	@Override
	public @Nullable Duration requestPrepared(EventLoop eventLoop) {
		this.phase = Outcome.Phase.SENDING;
		Duration deadline = this.lease.requestPrepared(this);
		HedgedAttempts race = this.race;
		if (race != null) {
			race.sent(this, eventLoop);
		}
		return deadline;
	}

	@Override
	public void requestSent() {
		this.phase = Outcome.Phase.AWAITING_HEADERS;
	}

	@Override
	public void responseReceived(int status) {
		this.status = status;
		this.phase = Outcome.Phase.RECEIVING;
		Hedging hedging = this.runtime.hedging();
		boolean endpointLatency = this.runtime.recordsLatency();
		if (endpointLatency || hedging != null) {
			long now = this.lease.runtimes().nanoTime();
			if (endpointLatency) {
				recordLatency(now);
			}
			if (hedging != null) {
				hedging.record(now - startNanos());
			}
		}
	}

	@Override
	public void responseCompleted() {
		// The status decides even here: the filter may not have looked at it yet.
		settle(Outcome.ofStatus(this.status, countsAsFailure(this.status)));
	}

	@Override
	public void responseFailed(Throwable error) {
		settle(this.lease.isClientGone() ? Outcome.Kind.CLIENT_GONE : Outcome.classify(this.phase, error));
	}

	/**
	 * Returns whether the service's passive health counts a status as the endpoint's
	 * failure ({@code health.passive.on-statuses}).
	 * @param status the upstream's status
	 * @return whether a failure
	 */
	boolean countsAsFailure(int status) {
		return this.runtime.settings().health().passive().countsAsFailure(status);
	}

	/**
	 * Settles the outcome, the first time only, and charges the endpoint for it.
	 * @param kind the outcome
	 * @return whether this call settled it
	 */
	boolean settle(Outcome.Kind kind) {
		if (!SETTLED.compareAndSet(this, null, kind)) {
			return false;
		}
		// A rollout judges its target by what passive health charges: the same failures,
		// and nothing for a client that left or an attempt the gateway gave up.
		RolloutWindow rollout = this.lease.rolloutWindow();
		switch (kind.charge()) {
			case SUCCESS -> {
				this.runtime.succeeded(endpoint());
				if (rollout != null) {
					rollout.succeeded(this.lease.runtimes().nanoTime() - startNanos());
				}
			}
			case FAILURE -> {
				if (this.runtime.recordsLatency()) {
					recordFailure(FAILURE_LATENCY_NANOS, this.lease.runtimes().nanoTime());
				}
				this.runtime.failed(endpoint());
				if (rollout != null) {
					rollout.failed();
				}
			}
			case NOBODY -> {
				// not the endpoint's doing
			}
		}
		return true;
	}

	/**
	 * Gives the attempt up: whatever it has not settled yet is the gateway's doing.
	 */
	void abandon() {
		settle(Outcome.Kind.CANCELLED);
	}

}
