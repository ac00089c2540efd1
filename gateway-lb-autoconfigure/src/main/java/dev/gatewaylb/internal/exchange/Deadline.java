package dev.gatewaylb.internal.exchange;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The exchange's header deadline, in one formula: {@code timeouts.response} bounds the
 * client's whole wait for the response headers from the first request sent, so a retry or
 * a backup gets only what is left of it, and none is worth sending with less than
 * {@link #MIN_ATTEMPT_NANOS} left.
 * <p>
 * The client's worst-case wait for its headers is therefore {@code timeouts.response},
 * plus the connect time of each attempt (bounded by {@code timeouts.connect}) and any
 * wait for a pooled connection ({@code pool.pending-timeout}): the deadline starts when a
 * request is sent, so an attempt that is still queueing for a connection or connecting
 * has not used any of it.
 */
final class Deadline {

	/**
	 * The least time an attempt must have before the deadline to be worth sending.
	 */
	static final long MIN_ATTEMPT_NANOS = 1_000_000;

	private Deadline() {
	}

	/**
	 * Returns how long an attempt sent now may wait for its headers.
	 * @param responseTimeout the service's {@code timeouts.response}; zero for none
	 * @param firstSentNanos when the exchange's first request was sent, 0 when this is
	 * the first
	 * @param nowNanos the balancer clock's current time
	 * @return the wait, or {@code null} for no limit
	 */
	static @Nullable Duration headerTimeout(Duration responseTimeout, long firstSentNanos, long nowNanos) {
		if (responseTimeout.isZero()) {
			return null;
		}
		if (firstSentNanos == 0) {
			return responseTimeout;
		}
		return Duration.ofNanos(Math.max(MIN_ATTEMPT_NANOS, left(responseTimeout, firstSentNanos, nowNanos)));
	}

	/**
	 * Returns whether another attempt sent now would still have time before the deadline.
	 * @param responseTimeout the service's {@code timeouts.response}; zero for none
	 * @param firstSentNanos when the exchange's first request was sent, 0 if not known
	 * @param nowNanos the balancer clock's current time
	 * @return whether there is time left
	 */
	static boolean hasTimeLeft(Duration responseTimeout, long firstSentNanos, long nowNanos) {
		return responseTimeout.isZero() || firstSentNanos == 0
				|| left(responseTimeout, firstSentNanos, nowNanos) >= MIN_ATTEMPT_NANOS;
	}

	private static long left(Duration responseTimeout, long firstSentNanos, long nowNanos) {
		return firstSentNanos + responseTimeout.toNanos() - nowNanos;
	}

}
