package dev.gatewaylb.internal.runtime;

/**
 * What a drain did.
 */
public enum Drain {

	/**
	 * The endpoint drains, or no longer does.
	 */
	DONE,

	/**
	 * The service has no such endpoint (or no such service is tracked).
	 */
	NOT_AN_ENDPOINT,

	/**
	 * Refused: more than {@code health.max-drain-percent} of the service's endpoints
	 * would drain.
	 */
	OVER_MAX_DRAIN_PERCENT

}
