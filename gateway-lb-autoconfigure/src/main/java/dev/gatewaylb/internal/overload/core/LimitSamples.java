package dev.gatewaylb.internal.overload.core;

import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * The samples of one endpoint's concurrency limiter, as the request path adds them:
 * counts and sums that only grow, and the most requests in flight a sample saw since the
 * limiter last read it. {@link EndpointLimiter} reads them on the control thread.
 * <p>
 * Thread-safe without a lock: {@link LongAdder}s and one {@link LongAccumulator}, so
 * event loops adding at once each add to a cell of their own.
 */
public final class LimitSamples {

	private final LongAdder samples = new LongAdder();

	private final LongAdder rttNanos = new LongAdder();

	private final LongAdder drops = new LongAdder();

	private final LongAccumulator maxInFlight = new LongAccumulator(Math::max, 0);

	/**
	 * Adds a sample.
	 * @param rttNanos the time to the response headers, or a negative value when the
	 * attempt failed before it was sent
	 * @param dropped whether the endpoint failed the request (a drop status, a timeout, a
	 * reset)
	 * @param inFlight the endpoint's requests in flight when the sample was taken
	 */
	public void add(long rttNanos, boolean dropped, int inFlight) {
		if (rttNanos >= 0) {
			this.rttNanos.add(rttNanos);
			this.samples.increment();
		}
		if (dropped) {
			this.drops.increment();
		}
		this.maxInFlight.accumulate(inFlight);
	}

	/**
	 * Returns the samples with a time added so far.
	 * @return the count
	 */
	public long samples() {
		return this.samples.sum();
	}

	/**
	 * Returns the sum of the samples' times.
	 * @return nanoseconds
	 */
	public long rttNanos() {
		return this.rttNanos.sum();
	}

	/**
	 * Returns the samples that were drops.
	 * @return the count
	 */
	public long drops() {
		return this.drops.sum();
	}

	/**
	 * Returns the most requests in flight a sample saw since the last call, and starts
	 * again from 0. A sample added during the call may count in neither window: it only
	 * loses one reading of a maximum.
	 * @return the count
	 */
	public int takeMaxInFlight() {
		return (int) this.maxInFlight.getThenReset();
	}

}
