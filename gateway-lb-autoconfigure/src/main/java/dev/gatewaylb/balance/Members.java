package dev.gatewaylb.balance;

import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The immutable part of a snapshot that every strategy reads: endpoints, their carried
 * state, which ones may be picked, and the ramp.
 */
final class Members {

	static final long NO_RAMP_END = Long.MIN_VALUE;

	final Endpoint[] endpoints;

	final EndpointState[] states;

	/**
	 * Indexes of the endpoints that may be picked (weight above 0, not draining),
	 * ascending.
	 */
	final int[] eligible;

	/**
	 * Whether each endpoint is draining: in the set, but taking no new picks.
	 */
	final boolean[] draining;

	final BalancerSettings settings;

	final LongSupplier nanoClock;

	final Supplier<? extends RandomGenerator> random;

	/**
	 * When the last ramp of this snapshot ends, or {@link #NO_RAMP_END}.
	 */
	final long rampEndsAtNanos;

	/**
	 * Set once a clock read has seen every ramp over, so later picks skip the clock. A
	 * stale {@code false} only costs one more clock read.
	 */
	private volatile boolean rampOver;

	Members(Endpoint[] endpoints, EndpointState[] states, boolean[] draining, BalancerSettings settings,
			LongSupplier nanoClock, Supplier<? extends RandomGenerator> random, long nowNanos) {
		this.endpoints = endpoints;
		this.states = states;
		this.draining = draining;
		this.settings = settings;
		this.nanoClock = nanoClock;
		this.random = random;
		int count = 0;
		for (int i = 0; i < endpoints.length; i++) {
			if (weight(i) > 0) {
				count++;
			}
		}
		this.eligible = new int[count];
		long rampEnd = NO_RAMP_END;
		for (int i = 0, e = 0; i < endpoints.length; i++) {
			if (weight(i) > 0) {
				this.eligible[e++] = i;
				long start = states[i].rampStartNanos;
				if (start != SlowStart.NO_RAMP && settings.slowStartNanos() > 0) {
					long end = start + settings.slowStartNanos();
					if (end - nowNanos > 0 && (rampEnd == NO_RAMP_END || end - rampEnd > 0)) {
						rampEnd = end;
					}
				}
			}
		}
		this.rampEndsAtNanos = rampEnd;
		this.rampOver = (rampEnd == NO_RAMP_END);
	}

	/**
	 * Returns the weight endpoint {@code index} is balanced with: its configured weight,
	 * or 0 while it drains.
	 */
	int weight(int index) {
		return this.draining[index] ? 0 : this.endpoints[index].weight();
	}

	/**
	 * Returns whether any endpoint may still be ramping, without reading the clock.
	 */
	boolean mayRamp() {
		return !this.rampOver;
	}

	/**
	 * Returns whether an endpoint is ramping at {@code nowNanos}.
	 */
	boolean rampingAt(long nowNanos) {
		if (this.rampOver) {
			return false;
		}
		if (nowNanos - this.rampEndsAtNanos >= 0) {
			this.rampOver = true;
			return false;
		}
		return true;
	}

	/**
	 * Returns the slow-start factor of endpoint {@code index} at {@code nowNanos}.
	 */
	double rampFactor(int index, long nowNanos) {
		long start = this.states[index].rampStartNanos;
		return (start == SlowStart.NO_RAMP) ? 1.0 : SlowStart.factor(nowNanos - start, this.settings.slowStartNanos());
	}

}
