package dev.gatewaylb.internal.control;

import org.jspecify.annotations.Nullable;

/**
 * Hears what the control side decides that an operator follows in a trace: an endpoint
 * ejected, drained or undrained, a rollout's verdict. Called where the decision is made
 * and logged (the control thread, or the request that ejected its endpoint); an
 * implementation returns quickly and never throws.
 */
public interface ControlEvents {

	/**
	 * Hears nothing.
	 */
	ControlEvents NONE = new ControlEvents() {
	};

	/**
	 * An endpoint was ejected.
	 * @param service the service
	 * @param endpoint the endpoint, {@code host:port}
	 * @param reason {@code consecutive-failures}, {@code latency} or {@code success-rate}
	 */
	default void ejected(String service, String endpoint, String reason) {
	}

	/**
	 * An endpoint was drained, or its drain lifted.
	 * @param service the service
	 * @param endpoint the endpoint, {@code host:port}
	 * @param draining whether it is draining now
	 */
	default void drained(String service, String endpoint, boolean draining) {
	}

	/**
	 * A rollout's verdict was given.
	 * @param split the split
	 * @param rollout the rollout's id
	 * @param verdict the verdict, as the actuator names it
	 * @param step the step it was given at
	 * @param reason why, or {@code null}
	 */
	default void rolloutVerdict(String split, String rollout, String verdict, int step, @Nullable String reason) {
	}

}
