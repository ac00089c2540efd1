package dev.gatewaylb.internal.balance;

/**
 * The balancing algorithms, each a policy over one endpoint snapshot.
 */
public enum Algorithm {

	/**
	 * Smooth weighted round-robin (nginx): weights 5,1,1 select {@code a a b a c a a}.
	 */
	ROUND_ROBIN,

	/**
	 * Fewest in-flight requests wins; ties go to the lowest index.
	 */
	LEAST_REQUESTS,

	/**
	 * Two distinct endpoints drawn at random; the one with fewer in-flight requests wins.
	 */
	POWER_OF_TWO_CHOICES,

	/**
	 * Ketama ring, 160 points per unit of weight; a request without a key falls back to
	 * round-robin. With a hash-balance-factor, a key whose endpoint is at its bounded
	 * load moves on along the ring.
	 */
	CONSISTENT_HASH,

	/**
	 * Power of two choices over a peak-sensitive moving average of latency times
	 * in-flight requests (Finagle's peak EWMA).
	 */
	PEAK_EWMA

}
