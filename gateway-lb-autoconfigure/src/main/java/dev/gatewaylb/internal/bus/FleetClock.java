package dev.gatewaylb.internal.bus;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A hybrid logical clock: the version of each decision a replica tells its fleet. A
 * version is the wall clock's milliseconds shifted left by 16 bits, plus a counter for
 * decisions within one millisecond; a replica that hears a later version moves its own
 * clock past it. So a decision taken after hearing another always has the higher version,
 * whatever the replicas' clocks say, and between replicas that did not hear each other
 * the later wall clock wins, as an operator would expect of two actions seconds apart.
 * Lock-free: every method is one atomic update.
 */
public final class FleetClock {

	/**
	 * Bits of a version below the milliseconds.
	 */
	static final int COUNTER_BITS = 16;

	private final LongSupplier wallMillis;

	private final AtomicLong last = new AtomicLong();

	FleetClock(LongSupplier wallMillis) {
		this.wallMillis = wallMillis;
	}

	/**
	 * Returns the version of a decision taken now: above every version seen so far.
	 */
	long next() {
		long physical = physical();
		return this.last.updateAndGet((last) -> Math.max(last + 1, physical));
	}

	/**
	 * Moves the clock past a version another replica sent.
	 */
	void observe(long version) {
		this.last.accumulateAndGet(version, Math::max);
	}

	/**
	 * Returns whether a version claims a time further ahead of this replica's wall clock
	 * than clocks drift: such an event is refused, as taking it would push every later
	 * decision's version past it.
	 */
	boolean isFarAhead(long version, long slackMillis) {
		return version > physical() + (slackMillis << COUNTER_BITS);
	}

	/**
	 * Returns whether a version claims a time further behind this replica's wall clock
	 * than any event stays in flight: such an event is a replay of one captured long ago,
	 * or of one the broker held while this replica was away from it.
	 */
	boolean isFarBehind(long version, long maxAgeMillis) {
		return version < physical() - (maxAgeMillis << COUNTER_BITS);
	}

	private long physical() {
		return this.wallMillis.getAsLong() << COUNTER_BITS;
	}

}
