package dev.gatewaylb.balance;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A peak-sensitive exponentially weighted moving average of an endpoint's latency: a
 * sample slower than the average replaces it at once; faster samples pull it down with
 * weight {@code 1 - exp(-elapsed / decay)}, and with no samples the average decays
 * towards 0 so that an idle endpoint is tried again.
 * <p>
 * Thread-safe without a lock: the average (a {@code float} of nanoseconds) and the time
 * of the last sample (an {@code int} of milliseconds, compared by wrapping subtraction)
 * share one {@code long}, so an update is a single compare-and-set of both. A lost race
 * retries against the newer state; no sample is dropped.
 *
 * @see <a href=
 * "https://github.com/twitter/finagle/blob/develop/finagle-core/src/main/scala/com/twitter/finagle/loadbalancer/PeakEwma.scala">Finagle
 * PeakEwma</a>
 */
final class PeakEwma {

	private final AtomicLong packed = new AtomicLong();

	/**
	 * Adds one latency sample.
	 * @param latencyNanos the observed latency
	 * @param nowNanos the current time of the balancer's clock
	 * @param decayNanos the decay time constant
	 */
	void observe(long latencyNanos, long nowNanos, long decayNanos) {
		int nowMillis = millis(nowNanos);
		double sample = Math.max(0, latencyNanos);
		long prev;
		long next;
		do {
			prev = this.packed.get();
			// Finagle's update: a slower sample than the stored average replaces it; a
			// faster one is blended in with the weight the elapsed time gives it.
			double cost = Float.intBitsToFloat((int) (prev >>> 32));
			double w = weight(prev, nowMillis, decayNanos);
			double updated = (sample > cost) ? sample : cost * w + sample * (1 - w);
			next = pack((float) updated, nowMillis);
		}
		while (!this.packed.compareAndSet(prev, next));
	}

	/**
	 * Raises the average to at least {@code floorNanos}, as after a failed attempt.
	 */
	void observeFailure(long floorNanos, long nowNanos) {
		int nowMillis = millis(nowNanos);
		long prev;
		long next;
		do {
			prev = this.packed.get();
			double cost = Float.intBitsToFloat((int) (prev >>> 32));
			if (cost >= floorNanos) {
				return;
			}
			next = pack((float) floorNanos, nowMillis);
		}
		while (!this.packed.compareAndSet(prev, next));
	}

	/**
	 * Returns the average as seen at {@code nowNanos}, decayed since the last sample.
	 */
	double cost(long nowNanos, long decayNanos) {
		return decayed(this.packed.get(), millis(nowNanos), decayNanos);
	}

	private static double decayed(long packed, int nowMillis, long decayNanos) {
		double cost = Float.intBitsToFloat((int) (packed >>> 32));
		return (cost == 0) ? 0 : cost * weight(packed, nowMillis, decayNanos);
	}

	/**
	 * Weight of the old average: {@code exp(-elapsed / decay)}.
	 */
	private static double weight(long packed, int nowMillis, long decayNanos) {
		// Wrapping subtraction of two int stamps is exact for gaps under 24 days; a
		// negative gap can only come from a clock read before a concurrent update.
		int elapsedMillis = Math.max(0, nowMillis - (int) packed);
		return Math.exp(-elapsedMillis * 1_000_000.0 / decayNanos);
	}

	private static long pack(float cost, int stampMillis) {
		return ((long) Float.floatToRawIntBits(cost) << 32) | (stampMillis & 0xffffffffL);
	}

	private static int millis(long nanos) {
		return (int) (nanos / 1_000_000);
	}

}
