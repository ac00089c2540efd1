package dev.gatewaylb.internal.balance;

/**
 * The slow-start ramp: an endpoint that joins a serving set takes a growing share of
 * traffic over the window instead of its full share at once, so a cold JVM or an empty
 * cache is not flooded.
 * <p>
 * The factor grows linearly with the time since the endpoint joined, from a floor of
 * {@value #MIN_FACTOR} to 1: at 0%, 25%, 50% and 100% of the window an endpoint of weight
 * 8 counts as 0.8, 2, 4 and 8. The floor is Envoy's default {@code min_weight_percent}; a
 * ramp that started at an absolute weight of 1 would do nothing for the most common
 * weight, 1.
 *
 * @see <a href=
 * "https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/load_balancing/slow_start">Envoy
 * slow start</a>
 */
public final class SlowStart {

	/**
	 * The share of its weight a joining endpoint starts with.
	 */
	public static final double MIN_FACTOR = 0.1;

	/**
	 * Marks an endpoint that does not ramp: it was in the set before slow start applied.
	 */
	static final long NO_RAMP = Long.MIN_VALUE;

	private SlowStart() {
	}

	/**
	 * Returns the share of its weight an endpoint gets {@code elapsedNanos} after it
	 * joined.
	 * @param elapsedNanos time since the endpoint joined
	 * @param windowNanos the ramp window; 0 turns slow start off
	 * @return a factor in {@code [MIN_FACTOR, 1]}
	 */
	public static double factor(long elapsedNanos, long windowNanos) {
		if (windowNanos <= 0 || elapsedNanos >= windowNanos) {
			return 1.0;
		}
		if (elapsedNanos <= 0) {
			return MIN_FACTOR;
		}
		return Math.max(MIN_FACTOR, (double) elapsedNanos / windowNanos);
	}

	/**
	 * Returns the effective weight of an endpoint {@code elapsedNanos} after it joined.
	 * @param weight the configured weight
	 * @param elapsedNanos time since the endpoint joined
	 * @param windowNanos the ramp window; 0 turns slow start off
	 * @return {@code weight} times the ramp factor
	 */
	public static double effectiveWeight(int weight, long elapsedNanos, long windowNanos) {
		return weight * factor(elapsedNanos, windowNanos);
	}

}
