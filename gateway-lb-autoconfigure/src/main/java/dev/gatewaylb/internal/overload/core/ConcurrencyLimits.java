package dev.gatewaylb.internal.overload.core;

import java.util.concurrent.TimeUnit;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;

/**
 * A service's concurrency limits ({@code concurrency.*}): which algorithm limits each of
 * its endpoints, between which bounds. The algorithms are Netflix concurrency-limits'
 * own; this class only chooses one, keeps its limit within {@code minLimit} and
 * {@code maxLimit} (Vegas has no lower bound of its own) and, for Gradient2, sets three
 * of its parameters for windows of a tenth of a second and endpoints of a few workers
 * (see {@link #GRADIENT_RTT_TOLERANCE}). Vegas, AIMD and the fixed limit keep the
 * library's defaults.
 *
 * @param algorithm the algorithm, {@link Algorithm#NONE} for no limit
 * @param initialLimit the limit before the first samples, and the fixed limit
 * @param minLimit the lowest limit
 * @param maxLimit the highest limit
 */
public record ConcurrencyLimits(Algorithm algorithm, int initialLimit, int minLimit, int maxLimit) {

	/**
	 * No limits.
	 */
	public static final ConcurrencyLimits NONE = new ConcurrencyLimits(Algorithm.NONE, 20, 1, 500);

	/**
	 * How long an AIMD sample may take before it counts as a drop: the library's own
	 * default.
	 */
	static final long AIMD_TIMEOUT_SECONDS = 5;

	/**
	 * Gradient2's tolerance of a short-term time above the long-term one: 1.0 in place of
	 * the library's 1.5. The library's default lets the limit grow until answers take
	 * half as long again as the long-term average, which then follows them up: on
	 * {@code OverloadIT}'s backends of four workers the limit crept from 8 to 12 in 20 s
	 * of overload, and the p99 with it. At 1.0 it holds at 6.
	 */
	static final double GRADIENT_RTT_TOLERANCE = 1.0;

	/**
	 * How far each window moves Gradient2's limit towards what the window says: 0.5 in
	 * place of the library's 0.2, which it chose for windows of a second. Ours close
	 * every tenth of a second ({@link EndpointLimiter}); from an initial limit too high
	 * the limit halves in three windows rather than seven, and the windows' noise moves
	 * it by one at most on {@code OverloadIT}'s runs.
	 */
	static final double GRADIENT_SMOOTHING = 0.5;

	public ConcurrencyLimits {
		if (minLimit < 1 || maxLimit < minLimit || initialLimit < minLimit || initialLimit > maxLimit) {
			throw new IllegalArgumentException("limits: initial " + initialLimit + ", min " + minLimit + ", max "
					+ maxLimit + " (expected: 1 <= min-limit <= initial-limit <= max-limit)");
		}
	}

	/**
	 * Returns whether endpoints are limited.
	 * @return whether the algorithm is not {@link Algorithm#NONE}
	 */
	public boolean enabled() {
		return this.algorithm != Algorithm.NONE;
	}

	/**
	 * Makes the limit of one endpoint.
	 * @return a new limit
	 * @throws IllegalStateException for {@link Algorithm#NONE}
	 */
	Limit newLimit() {
		return switch (this.algorithm) {
			case GRADIENT2 -> Gradient2Limit.newBuilder()
				.initialLimit(this.initialLimit)
				.minLimit(this.minLimit)
				.maxConcurrency(this.maxLimit)
				.queueSizeFunction(ConcurrencyLimits::gradientQueueSize)
				.rttTolerance(GRADIENT_RTT_TOLERANCE)
				.smoothing(GRADIENT_SMOOTHING)
				.build();
			case VEGAS -> VegasLimit.newBuilder().initialLimit(this.initialLimit).maxConcurrency(this.maxLimit).build();
			case AIMD -> AIMDLimit.newBuilder()
				.initialLimit(this.initialLimit)
				.minLimit(this.minLimit)
				.maxLimit(this.maxLimit)
				.timeout(AIMD_TIMEOUT_SECONDS, TimeUnit.SECONDS)
				.build();
			case FIXED -> FixedLimit.of(this.initialLimit);
			case NONE -> throw new IllegalStateException("no limit to make");
		};
	}

	/**
	 * Returns the requests Gradient2 lets wait at an endpoint beyond what it serves at
	 * once: half the square root of the limit, at least one (the square-root staffing
	 * rule: the slack a queue needs grows as the root of its load). The library's default
	 * is 4 at any limit, which suits limits in the hundreds and doubles the wait at an
	 * endpoint of four workers.
	 * @param limit the current limit
	 * @return the queue allowance
	 */
	static int gradientQueueSize(int limit) {
		return Math.max(1, (int) (Math.sqrt(limit) / 2));
	}

	/**
	 * Returns a limit within the bounds.
	 * @param limit what the algorithm says
	 * @return the limit between {@code minLimit} and {@code maxLimit}
	 */
	int bounded(int limit) {
		return Math.max(this.minLimit, Math.min(this.maxLimit, limit));
	}

	/**
	 * The algorithms.
	 */
	public enum Algorithm {

		/**
		 * No limit.
		 */
		NONE,

		/**
		 * Netflix's {@link Gradient2Limit}.
		 */
		GRADIENT2,

		/**
		 * Netflix's {@link VegasLimit}.
		 */
		VEGAS,

		/**
		 * Netflix's {@link AIMDLimit}.
		 */
		AIMD,

		/**
		 * Netflix's {@link FixedLimit}.
		 */
		FIXED

	}

}
