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

	/**
	 * Returns whether endpoint {@code b} is expected to serve one more request sooner
	 * than endpoint {@code a}: Finagle's cost, the decayed average times
	 * {@code inFlight + 1}, compared for both at the same instant, without reading the
	 * clock.
	 * <p>
	 * Both averages decay with the same {@code exp(-(now - stamp) / decay)}, so their
	 * ratio does not depend on {@code now}: dividing both costs by the newer endpoint's
	 * decay leaves the older one's average decayed by the gap between the two stamps, and
	 * at most one {@code exp} (none when both were sampled in the same millisecond). An
	 * endpoint never sampled costs 0 when idle and a penalty that dwarfs any latency when
	 * busy, as in {@link PowerOfTwoChoices}. A tie is {@code false}.
	 * @param b the packed state of endpoint {@code b} ({@link #packed()})
	 * @param inFlightB requests in flight at {@code b}
	 * @param a the packed state of endpoint {@code a}
	 * @param inFlightA requests in flight at {@code a}
	 * @param decayNanos the decay time constant
	 * @return whether {@code b} costs less than {@code a}
	 */
	static boolean cheaper(long b, int inFlightB, long a, int inFlightA, long decayNanos) {
		double latencyB = Float.intBitsToFloat((int) (b >>> 32));
		double latencyA = Float.intBitsToFloat((int) (a >>> 32));
		if (latencyA == 0 || latencyB == 0) {
			// Unsampled on at least one side: 0 or the penalty (39 hours) against the
			// other side's undecayed cost. Decay only lowers a sampled cost, which
			// changes the outcome against 0 in no case and against the penalty only for
			// latency times in-flight counts beyond 39 hours.
			return unsampledOr(latencyB, inFlightB) < unsampledOr(latencyA, inFlightA);
		}
		double costB = latencyB * (inFlightB + 1);
		double costA = latencyA * (inFlightA + 1);
		// Wrapping subtraction of the int stamps: exact for gaps under 24 days.
		int gapMillis = (int) b - (int) a;
		if (gapMillis > 0) {
			costA *= Math.exp(-gapMillis * 1_000_000.0 / decayNanos);
		}
		else if (gapMillis < 0) {
			costB *= Math.exp(gapMillis * 1_000_000.0 / decayNanos);
		}
		return costB < costA;
	}

	private static double unsampledOr(double latency, int inFlight) {
		if (latency != 0) {
			return latency * (inFlight + 1);
		}
		return (inFlight == 0) ? 0 : PowerOfTwoChoices.UNKNOWN_LATENCY_PENALTY + inFlight;
	}

	/**
	 * Returns the average and the time of the last sample, packed, for {@link #cheaper}.
	 */
	long packed() {
		return this.packed.get();
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
