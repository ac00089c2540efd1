package dev.gatewaylb.internal.balance;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

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

	/**
	 * Cost of an endpoint with requests in flight and no latency average (Finagle's):
	 * about 39 hours in nanoseconds.
	 */
	static final double UNKNOWN_LATENCY_PENALTY = Long.MAX_VALUE >> 16;

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
	 * Longest gap between two endpoints' last samples that {@link #cheaper} bridges
	 * without the clock, in decay time constants: beyond it the older average, decayed to
	 * "now", may be 0, and Finagle's rule for a busy endpoint without a usable average
	 * (the penalty) must see that.
	 */
	static final int MAX_GAP_DECAYS = 600;

	/**
	 * Returns whether endpoint {@code b} is expected to serve one more request sooner
	 * than endpoint {@code a}: Finagle's cost, the average decayed to "now" times
	 * {@code inFlight + 1}, or a penalty for a busy endpoint without one.
	 * <p>
	 * Both averages decay with the same {@code exp(-(now - stamp) / decay)}, so when both
	 * endpoints have samples, which one costs less does not depend on "now": dividing
	 * both costs by the newer endpoint's decay leaves the older average decayed by the
	 * gap between the two stamps. That takes no clock read and at most one {@code exp}
	 * (none when both were sampled in the same millisecond). When an endpoint has no
	 * sample yet, or the stamps lie more than {@value #MAX_GAP_DECAYS} decay times apart,
	 * both costs are read at {@code clock}'s "now" instead, as while an endpoint ramps.
	 * The answer is the clocked one except when both endpoints have been idle so long
	 * that the older average has decayed to 0 by "now" although the stamps are within the
	 * limit: then a busy older endpoint costs its tiny average, not the penalty
	 * (docs/algorithms.md).
	 * @param b the packed state of endpoint {@code b} ({@link #packed()})
	 * @param inFlightB requests in flight at {@code b}
	 * @param a the packed state of endpoint {@code a}
	 * @param inFlightA requests in flight at {@code a}
	 * @param decayNanos the decay time constant
	 * @param clock the balancer's clock, read only in the cases above
	 * @return whether {@code b} costs less than {@code a}; a tie is {@code false}
	 */
	static boolean cheaper(long b, int inFlightB, long a, int inFlightA, long decayNanos, LongSupplier clock) {
		double latencyB = Float.intBitsToFloat((int) (b >>> 32));
		double latencyA = Float.intBitsToFloat((int) (a >>> 32));
		// Wrapping subtraction of the int stamps: exact for gaps under 24 days, and the
		// limit below keeps every gap used here far shorter.
		int gapMillis = (int) b - (int) a;
		long maxGapMillis = Math.min(1 << 30, decayNanos / 1_000_000 * MAX_GAP_DECAYS);
		if (latencyA == 0 || latencyB == 0 || gapMillis > maxGapMillis || gapMillis < -maxGapMillis) {
			long now = clock.getAsLong();
			return cost(b, inFlightB, now, decayNanos) < cost(a, inFlightA, now, decayNanos);
		}
		double costB = latencyB * (inFlightB + 1);
		double costA = latencyA * (inFlightA + 1);
		if (gapMillis > 0) {
			costA *= Math.exp(-gapMillis * 1_000_000.0 / decayNanos);
		}
		else if (gapMillis < 0) {
			costB *= Math.exp(gapMillis * 1_000_000.0 / decayNanos);
		}
		return costB < costA;
	}

	/**
	 * Finagle's cost at {@code nowNanos}: the decayed average times {@code inFlight + 1},
	 * or, for an endpoint with requests in flight and no average (never sampled, or
	 * decayed to 0), a penalty that dwarfs any latency.
	 * @param packed the packed state ({@link #packed()})
	 * @param inFlight requests in flight
	 * @param nowNanos the balancer clock's current time
	 * @param decayNanos the decay time constant
	 * @return the cost
	 */
	static double cost(long packed, int inFlight, long nowNanos, long decayNanos) {
		double latency = decayed(packed, millis(nowNanos), decayNanos);
		return (latency == 0 && inFlight != 0) ? UNKNOWN_LATENCY_PENALTY + inFlight : latency * (inFlight + 1);
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
