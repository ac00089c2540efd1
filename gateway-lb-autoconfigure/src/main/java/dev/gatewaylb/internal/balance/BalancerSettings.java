package dev.gatewaylb.internal.balance;

import java.util.Objects;

/**
 * The knobs of one service's balancer.
 *
 * @param algorithm the algorithm
 * @param slowStartNanos ramp window for endpoints that join a serving set, 0 for none
 * @param ewmaDecayNanos time constant of the peak-EWMA decay, {@code > 0}
 * @param hashBalanceFactor the bounded-load factor of consistent hashing: 0 for off,
 * otherwise {@code > 1} (an endpoint takes at most this factor times its share of the
 * requests in flight); other algorithms ignore it
 * @param levels how endpoints form priority levels, {@link LevelSettings#NONE} for one
 * pool
 */
public record BalancerSettings(Algorithm algorithm, long slowStartNanos, long ewmaDecayNanos, double hashBalanceFactor,
		LevelSettings levels) {

	/**
	 * Round-robin, no slow start, a 10 s EWMA decay, no bounded load.
	 */
	public static final BalancerSettings DEFAULTS = new BalancerSettings(Algorithm.ROUND_ROBIN, 0, 10_000_000_000L);

	public BalancerSettings {
		Objects.requireNonNull(algorithm, "algorithm");
		Objects.requireNonNull(levels, "levels");
		if (slowStartNanos < 0) {
			throw new IllegalArgumentException("slow-start: " + slowStartNanos + "ns (expected: >= 0)");
		}
		if (ewmaDecayNanos <= 0) {
			throw new IllegalArgumentException("decay: " + ewmaDecayNanos + "ns (expected: > 0)");
		}
		if (!isValidHashBalanceFactor(hashBalanceFactor)) {
			throw new IllegalArgumentException(
					"hash-balance-factor: " + hashBalanceFactor + " (expected: 0 (off) or > 1, e.g. 1.25)");
		}
	}

	/**
	 * Creates settings without bounded load.
	 * @param algorithm the algorithm
	 * @param slowStartNanos ramp window for endpoints that join a serving set, 0 for none
	 * @param ewmaDecayNanos time constant of the peak-EWMA decay, {@code > 0}
	 */
	public BalancerSettings(Algorithm algorithm, long slowStartNanos, long ewmaDecayNanos) {
		this(algorithm, slowStartNanos, ewmaDecayNanos, 0);
	}

	/**
	 * Creates settings without priority levels.
	 * @param algorithm the algorithm
	 * @param slowStartNanos ramp window for endpoints that join a serving set, 0 for none
	 * @param ewmaDecayNanos time constant of the peak-EWMA decay, {@code > 0}
	 * @param hashBalanceFactor the bounded-load factor of consistent hashing, 0 for off
	 */
	public BalancerSettings(Algorithm algorithm, long slowStartNanos, long ewmaDecayNanos, double hashBalanceFactor) {
		this(algorithm, slowStartNanos, ewmaDecayNanos, hashBalanceFactor, LevelSettings.NONE);
	}

	/**
	 * Returns whether {@code factor} is a valid bounded-load factor: 0 (off), or finite
	 * and above 1. A factor of 1 or less would leave no room above the average, and NaN
	 * compares false with everything.
	 * @param factor the factor
	 * @return whether it is valid
	 */
	public static boolean isValidHashBalanceFactor(double factor) {
		return factor == 0 || (factor > 1 && Double.isFinite(factor));
	}

	/**
	 * Returns these settings with another algorithm.
	 * @param algorithm the algorithm
	 * @return the settings
	 */
	public BalancerSettings withAlgorithm(Algorithm algorithm) {
		return new BalancerSettings(algorithm, this.slowStartNanos, this.ewmaDecayNanos, this.hashBalanceFactor,
				this.levels);
	}

	/**
	 * Returns these settings with another bounded-load factor.
	 * @param hashBalanceFactor 0 for off, otherwise {@code > 1}
	 * @return the settings
	 */
	public BalancerSettings withHashBalanceFactor(double hashBalanceFactor) {
		return new BalancerSettings(this.algorithm, this.slowStartNanos, this.ewmaDecayNanos, hashBalanceFactor,
				this.levels);
	}

	/**
	 * Returns these settings with other priority levels.
	 * @param levels the levels
	 * @return the settings
	 */
	public BalancerSettings withLevels(LevelSettings levels) {
		return new BalancerSettings(this.algorithm, this.slowStartNanos, this.ewmaDecayNanos, this.hashBalanceFactor,
				levels);
	}

}
