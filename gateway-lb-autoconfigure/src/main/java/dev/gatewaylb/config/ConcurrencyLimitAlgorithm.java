package dev.gatewaylb.config;

/**
 * The values of {@code concurrency.limit}.
 */
public enum ConcurrencyLimitAlgorithm {

	/**
	 * No limit: an endpoint takes what its pool lets through.
	 */
	NONE,

	/**
	 * Netflix's Gradient2: the limit follows the ratio of the long-term to the recent
	 * latency, plus a small queue.
	 */
	GRADIENT2,

	/**
	 * Netflix's Vegas: the limit follows the queue estimated from the lowest latency
	 * seen.
	 */
	VEGAS,

	/**
	 * Additive increase, multiplicative decrease on drops (failures and timeouts).
	 */
	AIMD,

	/**
	 * A fixed limit of {@code initial-limit}.
	 */
	FIXED

}
