package dev.gatewaylb.internal.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

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
	 * When the ramp began, or {@link SlowStart#NO_RAMP}. Written when the address joins,
	 * and again when it returns from an ejection.
	 */
	volatile long rampStartNanos;

	private final AtomicInteger consecutiveFailures = new AtomicInteger();

	/**
	 * Until when passive health keeps the endpoint out, or {@link #NOT_EJECTED}.
	 */
	private volatile long ejectedUntilNanos = NOT_EJECTED;

	private volatile int timesEjected;

	private volatile long returnedAtNanos = NOT_EJECTED;

	private volatile boolean unhealthy;

	private final LongAdder ejections = new LongAdder();

	/**
	 * Latency samples and their sum since the endpoint joined, for latency-based
	 * ejection: only ever added to on the request path (two uncontended-cell adds, no
	 * allocation), read by the control thread, which keeps its own baselines.
	 */
	private final LongAdder latencySamples = new LongAdder();

	private final LongAdder latencyTotalNanos = new LongAdder();

	/**
	 * Answers and failures counted for success-rate ejection, when it is on.
	 */
	private final LongAdder answers = new LongAdder();

	private final LongAdder failedAnswers = new LongAdder();

	private volatile double lastSuccessRate = Double.NaN;

	/**
	 * Requests that followed a session's affinity cookie here: added to on the request
	 * path, read by the control thread, which keeps the last minute of it in a ring of
	 * sums only it touches, and publishes the difference.
	 */
	private final LongAdder followed = new LongAdder();

	private long @Nullable [] followedSums;

	private int followedAt;

	private volatile long followedLastMinute;

	/**
	 * The limit of requests in flight its concurrency limiter set; {@link #UNLIMITED}
	 * while the service has none. Written by the control thread, read by every pick.
	 */
	private volatile int concurrencyLimit = UNLIMITED;

	/**
	 * The limiter's samples: counts and sums that only grow, and the most requests in
	 * flight a sample saw since the control thread last read it.
	 */
	private final LongAdder limitSamples = new LongAdder();

	private final LongAdder limitRttNanos = new LongAdder();

	private final LongAdder limitDrops = new LongAdder();

	private final LongAccumulator limitMaxInFlight = new LongAccumulator(Math::max, 0);

	/**
	 * The limit of an endpoint whose service limits nothing.
	 */
	public static final int UNLIMITED = Integer.MAX_VALUE;

	static final long NOT_EJECTED = Long.MIN_VALUE;

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

	/**
	 * Returns how many latency samples the endpoint has had since it joined.
	 * @return the count
	 */
	public long latencySamples() {
		return this.latencySamples.sum();
	}

	/**
	 * Returns the sum of the endpoint's latency samples since it joined.
	 * @return nanoseconds
	 */
	public long latencyTotalNanos() {
		return this.latencyTotalNanos.sum();
	}

	/**
	 * Counts an answer for success-rate and failure-percentage ejection, which read the
	 * two sums once an interval on the control thread. {@link LongAdder}s: an event loop
	 * adds to a cell of its own, no contention, no lock.
	 * @param failed whether passive health counted it a failure
	 */
	public void countAnswer(boolean failed) {
		this.answers.increment();
		if (failed) {
			this.failedAnswers.increment();
		}
	}

	/**
	 * Returns the answers counted since the endpoint joined.
	 * @return the count
	 */
	public long answers() {
		return this.answers.sum();
	}

	/**
	 * Returns the failures among the answers counted since the endpoint joined.
	 * @return the count
	 */
	public long failedAnswers() {
		return this.failedAnswers.sum();
	}

	/**
	 * Counts a request that followed a session's affinity cookie to this endpoint.
	 */
	public void followed() {
		this.followed.increment();
	}

	/**
	 * Returns the requests that followed an affinity cookie here over the last
	 * {@link #rollFollowed} window.
	 * @return the count, 0 when the service has no affinity
	 */
	public long followedLastMinute() {
		return this.followedLastMinute;
	}

	/**
	 * Moves the window of followed requests on by one of its {@code slots}: called by one
	 * thread at a fixed interval, so that the window covers {@code slots} intervals.
	 * @param slots the intervals the window covers
	 */
	public void rollFollowed(int slots) {
		long now = this.followed.sum();
		long[] sums = this.followedSums;
		if (sums == null || sums.length != slots) {
			// Zeros: the follows counted before the first step are in the window. They
			// are of the last minute but for a service whose affinity was turned off and
			// on again, which only counts while it is on.
			sums = new long[slots];
			this.followedSums = sums;
			this.followedAt = 0;
		}
		long windowAgo = sums[this.followedAt];
		sums[this.followedAt] = now;
		this.followedAt = (this.followedAt + 1) % slots;
		this.followedLastMinute = now - windowAgo;
	}

	/**
	 * Returns the success rate of the last interval success-rate ejection judged.
	 * @return percent, or NaN when the endpoint had fewer than the request volume
	 */
	public double lastSuccessRate() {
		return this.lastSuccessRate;
	}

	/**
	 * Sets the success rate of the interval just judged: the control thread writes, the
	 * actuator reads.
	 * @param percent the rate, or NaN
	 */
	public void lastSuccessRate(double percent) {
		this.lastSuccessRate = percent;
	}

	/**
	 * Returns the concurrency limit the endpoint's limiter set.
	 * @return the limit, or {@link #UNLIMITED}
	 */
	public int concurrencyLimit() {
		return this.concurrencyLimit;
	}

	/**
	 * Sets the concurrency limit: the control thread writes, picks read.
	 * @param limit the limit, {@code >= 1}, or {@link #UNLIMITED}
	 */
	public void concurrencyLimit(int limit) {
		this.concurrencyLimit = limit;
	}

	/**
	 * Returns whether the endpoint has as many requests in flight as its concurrency
	 * limit, so that a pick passes it by. Two picks that read the count at once may both
	 * take the last place: the limit is soft by one request per racing pick, as Netflix's
	 * own limiters are (they also read, then add).
	 * @return whether at its limit
	 */
	public boolean atConcurrencyLimit() {
		return this.inFlight >= this.concurrencyLimit;
	}

	/**
	 * Adds a sample for the endpoint's concurrency limiter, which the control thread
	 * feeds from these sums. {@link LongAdder}s: an event loop adds to a cell of its own,
	 * no lock.
	 * @param rttNanos the time to the response headers, or a negative value when the
	 * attempt failed before it was sent
	 * @param dropped whether the endpoint failed the request (a failure status, a
	 * timeout, a reset)
	 */
	public void addLimitSample(long rttNanos, boolean dropped) {
		if (rttNanos >= 0) {
			this.limitRttNanos.add(rttNanos);
			this.limitSamples.increment();
		}
		if (dropped) {
			this.limitDrops.increment();
		}
		this.limitMaxInFlight.accumulate(this.inFlight);
	}

	/**
	 * Returns the limiter samples with a time counted since the endpoint joined.
	 * @return the count
	 */
	public long limitSamples() {
		return this.limitSamples.sum();
	}

	/**
	 * Returns the sum of the limiter samples' times.
	 * @return nanoseconds
	 */
	public long limitRttNanos() {
		return this.limitRttNanos.sum();
	}

	/**
	 * Returns the limiter samples that were drops, since the endpoint joined.
	 * @return the count
	 */
	public long limitDrops() {
		return this.limitDrops.sum();
	}

	/**
	 * Returns the most requests in flight a limiter sample saw since the last call, and
	 * starts again from 0. A sample added during the call may count in neither window: it
	 * only loses one reading of a maximum.
	 * @return the count
	 */
	public int takeLimitMaxInFlight() {
		return (int) this.limitMaxInFlight.getThenReset();
	}

	/**
	 * Adds a latency sample to the plain sums that latency-based ejection reads.
	 */
	void addLatencySample(long latencyNanos) {
		this.latencyTotalNanos.add(Math.max(0, latencyNanos));
		this.latencySamples.increment();
	}

	/**
	 * Returns how many failures in a row the endpoint has had since its last success.
	 * @return the streak
	 */
	public int consecutiveFailures() {
		return this.consecutiveFailures.get();
	}

	/**
	 * Returns whether passive health has the endpoint out at {@code nowNanos}.
	 * @param nowNanos the balancer clock's current time
	 * @return whether ejected
	 */
	public boolean isEjected(long nowNanos) {
		long until = this.ejectedUntilNanos;
		return until != NOT_EJECTED && nowNanos - until < 0;
	}

	/**
	 * Returns until when the endpoint is ejected.
	 * @return the balancer clock's time, or {@code Long.MIN_VALUE} when not ejected
	 */
	public long ejectedUntilNanos() {
		return this.ejectedUntilNanos;
	}

	/**
	 * Returns how many times passive health has ejected the endpoint without a long
	 * enough healthy spell since.
	 * @return the count, which multiplies the next ejection time
	 */
	public int timesEjected() {
		return this.timesEjected;
	}

	/**
	 * Returns how many times passive health has ejected the endpoint since it joined.
	 * @return the count
	 */
	public long ejections() {
		return this.ejections.sum();
	}

	/**
	 * Returns whether the last active health check passed (true until a check fails).
	 * @return whether healthy
	 */
	public boolean isHealthy() {
		return !this.unhealthy;
	}

	/**
	 * Records the outcome of an active health check.
	 * @param healthy whether it passed
	 * @return whether the state changed
	 */
	public boolean markHealthy(boolean healthy) {
		boolean changed = this.unhealthy == healthy;
		this.unhealthy = !healthy;
		return changed;
	}

	/**
	 * Records a success: ends the failure streak, and forgets past ejections once the
	 * endpoint has served well for {@code forgiveAfterNanos} since its return.
	 * @param nowNanos the balancer clock's current time
	 * @param forgiveAfterNanos how long after a return the ejection count resets
	 */
	public void recordSuccess(long nowNanos, long forgiveAfterNanos) {
		if (this.consecutiveFailures.get() != 0) {
			this.consecutiveFailures.set(0);
		}
		long returned = this.returnedAtNanos;
		if (this.timesEjected != 0 && returned != NOT_EJECTED && nowNanos - returned >= forgiveAfterNanos) {
			this.timesEjected = 0;
		}
	}

	/**
	 * Records a failure.
	 * @return the failure streak including this one
	 */
	public int recordFailure() {
		return this.consecutiveFailures.incrementAndGet();
	}

	/**
	 * Ejects the endpoint until {@code untilNanos}, unless it is already ejected.
	 * @param nowNanos the balancer clock's current time
	 * @param untilNanos when it may return
	 * @return whether this call ejected it
	 */
	public synchronized boolean eject(long nowNanos, long untilNanos) {
		if (isEjected(nowNanos)) {
			return false;
		}
		this.ejectedUntilNanos = untilNanos;
		this.timesEjected++;
		this.ejections.increment();
		this.consecutiveFailures.set(0);
		return true;
	}

	/**
	 * Marks the return of an endpoint whose ejection ended, ramping it from
	 * {@code nowNanos} when {@code ramp} is set.
	 */
	synchronized void returned(long nowNanos, boolean ramp) {
		this.ejectedUntilNanos = NOT_EJECTED;
		this.returnedAtNanos = nowNanos;
		if (ramp) {
			this.rampStartNanos = nowNanos;
		}
	}

	void acquire() {
		IN_FLIGHT.getAndAdd(this, 1);
		this.picks.increment();
	}

	void release() {
		IN_FLIGHT.getAndAdd(this, -1);
	}

}
