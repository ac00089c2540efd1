package dev.gatewaylb.internal.exchange;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import dev.gatewaylb.internal.observation.AttemptContext;
import dev.gatewaylb.internal.observation.AttemptObservations;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * What an observed exchange's picks know for their observations: made only when attempts
 * are observed, so that an exchange that observes nothing carries one {@code null} field
 * for all of it ({@link Picks}). Written by the exchange's steps, one at a time, but for
 * a hedged round's backup, counted on the hedge timer's thread.
 */
final class ObservedPicks {

	private static final VarHandle ATTEMPTS;

	static {
		try {
			ATTEMPTS = MethodHandles.lookup().findVarHandle(ObservedPicks.class, "attempts", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final AttemptObservations observations;

	/**
	 * What the next attempt picked is, and why: set by the owner before a retry, a
	 * re-pick or a pick after a wait.
	 */
	private String nextKind = AttemptContext.FIRST;

	private @Nullable String nextReason;

	/**
	 * The split's target and the rollout's id and step.
	 */
	private @Nullable String splitTarget;

	private @Nullable String rollout;

	/**
	 * The exchange's Reactor context as Spring Cloud Gateway kept it, before an attempt's
	 * observation replaced it in the exchange: read at the first observed claim, on the
	 * exchange's thread, before any round could start a backup.
	 */
	private @Nullable ContextView reactorContext;

	/**
	 * Attempts observed so far. A backup is counted on the hedge timer's thread while the
	 * exchange's may count a retry of a round just decided: one atomic add, no lock.
	 */
	@SuppressWarnings("unused") // accessed through ATTEMPTS
	private volatile int attempts;

	ObservedPicks(AttemptObservations observations) {
		this.observations = observations;
	}

	/**
	 * Says what the next attempt is and why.
	 * @param kind one of {@link AttemptContext}'s kinds, or {@code null} to keep the kind
	 * (a pick after a wait is what the pick it waited for was)
	 * @param reason why an endpoint is skipped or the request waited, or {@code null}
	 */
	void nextAttempt(@Nullable String kind, @Nullable String reason) {
		if (kind != null) {
			this.nextKind = kind;
		}
		this.nextReason = reason;
	}

	void split(String target, @Nullable String rollout) {
		this.splitTarget = target;
		this.rollout = rollout;
	}

	/**
	 * Records a request shed before any attempt.
	 */
	void shed(ServiceRuntime runtime, ServerWebExchange exchange, String reason) {
		this.observations.shed(context(runtime, "", this.nextKind, null), parent(exchange), reason);
	}

	/**
	 * Starts the observation of an attempt just claimed, before the lease holds it: a
	 * closed lease releases it at once, and the release stops the observation.
	 */
	void claimed(ServiceRuntime runtime, ServerWebExchange exchange, Attempt attempt, boolean backup) {
		String kind = backup ? AttemptContext.HEDGE : this.nextKind;
		String reason = backup ? "hedge-delay" : this.nextReason;
		if (!backup) {
			this.nextReason = null;
		}
		AttemptContext context = context(runtime, attempt.endpoint().address(), kind, reason);
		attempt.observe(this.observations.start(context, parent(exchange)));
	}

	private AttemptContext context(ServiceRuntime runtime, String endpoint, String kind, @Nullable String reason) {
		int number = (int) ATTEMPTS.getAndAdd(this, 1) + 1;
		return new AttemptContext(runtime.id(), AttemptObservations.name(runtime.settings().balancer().algorithm()),
				kind, endpoint, number, this.splitTarget, this.rollout, reason);
	}

	/**
	 * Returns the exchange's observation, the parent of its attempts'.
	 */
	@Nullable Observation parent(ServerWebExchange exchange) {
		ContextView context = this.reactorContext;
		if (context == null) {
			context = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REACTOR_CONTEXT_ATTR);
			this.reactorContext = context;
		}
		return AttemptObservations.current(context);
	}

	/**
	 * Makes the gateway's client observation of an attempt (its request header filter
	 * starts {@code http.client.requests} from the exchange's Reactor context) the
	 * attempt's child, so that the trace headers the endpoint gets name the attempt.
	 */
	void routed(ServerWebExchange exchange, Attempt attempt) {
		Observation observation = attempt.observation();
		ContextView context = this.reactorContext;
		if (observation != null && context != null) {
			exchange.getAttributes()
				.put(ServerWebExchangeUtils.GATEWAY_REACTOR_CONTEXT_ATTR,
						Context.of(context).put(AttemptObservations.CONTEXT_KEY, observation));
		}
	}

}
