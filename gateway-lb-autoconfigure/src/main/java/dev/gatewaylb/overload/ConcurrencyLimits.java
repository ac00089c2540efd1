package dev.gatewaylb.overload;

import java.util.concurrent.TimeUnit;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;

/**
 * A service's concurrency limits ({@code concurrency.*}): which algorithm limits each of
 * its endpoints, between which bounds. The algorithms are Netflix concurrency-limits'
 * own, with their defaults; this class only chooses one and keeps its limit within
 * {@code minLimit} and {@code maxLimit} (Vegas has no lower bound of its own).
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
