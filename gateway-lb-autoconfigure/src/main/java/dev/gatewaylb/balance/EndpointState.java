package dev.gatewaylb.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the balancer knows about one address over time: requests in flight, picks, the
 * latency average and when it joined. One instance per address lives as long as the
 * address stays in the set: rebuilds hand the same object to the next snapshot, so a
 * request picked from an old snapshot releases into the counter the new one reads.
 * <p>
 * Thread-safe; every read and update is lock-free.
 */
public final class EndpointState {

	private static final VarHandle IN_FLIGHT;

	static {
		try {
			IN_FLIGHT = MethodHandles.lookup().findVarHandle(EndpointState.class, "inFlight", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final String address;

	private final LongAdder picks = new LongAdder();

	final PeakEwma latency = new PeakEwma();

	/**
	 * When the ramp began, or {@link SlowStart#NO_RAMP}. Written only by a rebuild.
	 */
	final long rampStartNanos;

	@SuppressWarnings("unused") // accessed through IN_FLIGHT
	private volatile int inFlight;

	EndpointState(String address, long rampStartNanos) {
		this.address = address;
		this.rampStartNanos = rampStartNanos;
	}

	/**
	 * Returns {@code host:port}.
	 * @return the address
	 */
	public String address() {
		return this.address;
	}

	/**
	 * Returns the number of requests picked for this address and not yet released.
	 * @return the in-flight count, {@code >= 0}
	 */
	public int inFlight() {
		return this.inFlight;
	}

	/**
	 * Returns how many times this address was picked since it joined the set.
	 * @return the pick count
	 */
	public long picks() {
		return this.picks.sum();
	}

	/**
	 * Returns the latency average at {@code nowNanos}, in nanoseconds; 0 before the first
	 * sample.
	 * @param nowNanos the balancer clock's current time
	 * @param decayNanos the decay time constant
	 * @return the decayed peak EWMA
	 */
	public double latencyNanos(long nowNanos, long decayNanos) {
		return this.latency.cost(nowNanos, decayNanos);
	}

	void acquire() {
		IN_FLIGHT.getAndAdd(this, 1);
		this.picks.increment();
	}

	void release() {
		IN_FLIGHT.getAndAdd(this, -1);
	}

}
