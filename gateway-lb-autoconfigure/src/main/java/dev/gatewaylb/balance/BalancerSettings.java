package dev.gatewaylb.balance;

import java.util.Objects;

/**
 * The knobs of one service's balancer.
 *
 * @param algorithm the algorithm
 * @param slowStartNanos ramp window for endpoints that join a serving set, 0 for none
 * @param ewmaDecayNanos time constant of the peak-EWMA decay, {@code > 0}
 */
public record BalancerSettings(Algorithm algorithm, long slowStartNanos, long ewmaDecayNanos) {

	/**
	 * Round-robin, no slow start, a 10 s EWMA decay.
	 */
	public static final BalancerSettings DEFAULTS = new BalancerSettings(Algorithm.ROUND_ROBIN, 0, 10_000_000_000L);

	public BalancerSettings {
		Objects.requireNonNull(algorithm, "algorithm");
		if (slowStartNanos < 0) {
			throw new IllegalArgumentException("slow-start: " + slowStartNanos + "ns (expected: >= 0)");
		}
		if (ewmaDecayNanos <= 0) {
			throw new IllegalArgumentException("decay: " + ewmaDecayNanos + "ns (expected: > 0)");
		}
	}

	/**
	 * Returns these settings with another algorithm.
	 * @param algorithm the algorithm
	 * @return the settings
	 */
	public BalancerSettings withAlgorithm(Algorithm algorithm) {
		return new BalancerSettings(algorithm, this.slowStartNanos, this.ewmaDecayNanos);
	}

}
