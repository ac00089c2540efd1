package dev.gatewaylb.config;

/**
 * The values of {@code algorithm}.
 */
public enum BalancingAlgorithm {

	/**
	 * Smooth weighted round-robin (nginx).
	 */
	ROUND_ROBIN,

	/**
	 * Fewest requests in flight.
	 */
	LEAST_REQUESTS,

	/**
	 * Fewer requests in flight of two endpoints drawn at random.
	 */
	POWER_OF_TWO_CHOICES,

	/**
	 * Ketama consistent hashing of {@code hash-key}.
	 */
	CONSISTENT_HASH,

	/**
	 * Power of two choices over latency times requests in flight (Finagle).
	 */
	PEAK_EWMA

}
