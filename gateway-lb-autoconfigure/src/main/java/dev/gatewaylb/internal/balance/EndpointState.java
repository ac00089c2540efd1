package dev.gatewaylb.internal.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
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
	 * Latency samples and their sum since the endpoint joined, for the locality spill's
	 * level latencies: only ever added to on the request path (two uncontended-cell adds,
	 * no allocation), read by the control thread, which keeps its own baselines.
	 */
	private final LongAdder latencySamples = new LongAdder();

	private final LongAdder latencyTotalNanos = new LongAdder();

	/**
	 * How many of the endpoint's latest latency samples latency-based ejection can read:
	 * a power of two.
	 */
	public static final int LATENCY_RING = 128;

	private static final long[] EMPTY_RING = new long[LATENCY_RING];

	static {
		Arrays.fill(EMPTY_RING, -1);
	}

	/**
	 * The latest latency samples latency-based ejection takes its median of: a ring of
	 * {@value #LATENCY_RING} slots, each sample at the slot of its sequence number
	 * ({@link #ejectionSamples}); -1 in a slot never written. See
	 * {@link #addLatencySample} for why it is safe without a lock.
	 */
	private final AtomicLongArray latencyRing = new AtomicLongArray(EMPTY_RING);

	private final AtomicLong ejectionSamples = new AtomicLong();

	/**
	 * Answers and failures counted for success-rate ejection, when it is on.
	 */
	private final LongAdder answers = new LongAdder();

	private final LongAdder failedAnswers = new LongAdder();

	private volatile double lastSuccessRate = Double.NaN;

	/**
	 * The limit of requests in flight its concurrency limiter set; {@link #UNLIMITED}
	 * while the service has none. Written by the control thread, read by every pick.
	 */
	private volatile int concurrencyLimit = UNLIMITED;

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
	 * Returns how many latency samples the endpoint has had since it joined, all of them
	 * (for the locality spill).
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
	 * Returns how many latency samples latency-based ejection has had from the endpoint
	 * since it joined: the sequence number of the next one.
	 * @return the count
	 */
	public long ejectionSamples() {
		return this.ejectionSamples.get();
	}

	/**
	 * Copies the samples of latency-based ejection numbered {@code from} (included) to
	 * {@code to} (excluded), or the latest {@value #LATENCY_RING} of them when there are
	 * more, into {@code into}. Control thread only; see {@link #addLatencySample} for
	 * what a copy taken while samples arrive holds.
	 * @param from the number of the first sample wanted
	 * @param to the number after the last one, at most {@link #ejectionSamples()} read
	 * before
	 * @param into where to copy them, at least {@value #LATENCY_RING} long
	 * @return how many were copied, from index 0
	 */
	public int copyEjectionSamples(long from, long to, long[] into) {
		int copied = 0;
		for (long n = Math.max(from, to - LATENCY_RING); n < to; n++) {
			long nanos = this.latencyRing.getAcquire((int) n & (LATENCY_RING - 1));
			if (nanos >= 0) {
				into[copied++] = nanos;
			}
		}
		return copied;
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
	 * Adds a latency sample to the plain sums, and, with {@code ejection}, to the ring of
	 * samples latency-based ejection reads.
	 * <p>
	 * The ring is safe without a lock: a sample takes its sequence number with one atomic
	 * increment, so two samples never share a number, and is then stored (a release
	 * write, no allocation) in the slot of that number. The control thread reads the
	 * count first and then the slots of the numbers below it. A slot whose number was
	 * taken but not yet stored shows its previous value: -1 (never written, skipped) or a
	 * sample of the same endpoint {@value #LATENCY_RING} numbers older; a slot
	 * overwritten meanwhile by a sample numbered after the count shows that newer sample.
	 * So every value read is a real latency of this endpoint, and at most one per sample
	 * being recorded at that instant (one per event loop) is from outside the window: a
	 * median of 20 samples or more moves by at most that many ranks. The count itself is
	 * exact.
	 */
	void addLatencySample(long latencyNanos, boolean ejection) {
		long nanos = Math.max(0, latencyNanos);
		this.latencyTotalNanos.add(nanos);
		this.latencySamples.increment();
		if (ejection) {
			long number = this.ejectionSamples.getAndIncrement();
			this.latencyRing.setRelease((int) number & (LATENCY_RING - 1), nanos);
		}
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
