package dev.gatewaylb.internal.retry;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Caps retries at a share of requests over a sliding window, plus a floor per second so
 * that a quiet service can still retry: over the last {@value #WINDOW_SECONDS} seconds,
 * retries may not exceed {@code percent}% of requests plus
 * {@code minPerSecond x }{@value #WINDOW_SECONDS}. A retry storm (every endpoint failing)
 * therefore adds at most that much load, instead of multiplying it by the number of
 * attempts. Finagle's and gRPC's retry budgets work the same way.
 * <p>
 * Lock-free: one-second buckets of requests and retries; a bucket is reset by the first
 * thread to enter a new second. Requests, counted on every request, go to striped
 * {@link LongAdder}s, so event loops counting at once do not contend on one cache line;
 * retries, rare, to an atomic array. Counting is approximate at bucket boundaries by at
 * most one second's traffic, never unbounded.
 */
public final class RetryBudget {

	/**
	 * Length of the window, in one-second buckets.
	 */
	public static final int WINDOW_SECONDS = 10;

	/**
	 * Retries allowed per request: the percent over 100.
	 */
	private final double share;

	private final int minPerSecond;

	private final LongSupplier nanoClock;

	private final LongAdder[] requests = new LongAdder[WINDOW_SECONDS];

	private final AtomicLongArray retries = new AtomicLongArray(WINDOW_SECONDS);

	/**
	 * The second each bucket currently counts.
	 */
	private final AtomicLongArray seconds = new AtomicLongArray(WINDOW_SECONDS);

	/**
	 * Creates a budget.
	 * @param percent retries allowed as a share of requests, 0 to 100 or more
	 * @param minPerSecond retries allowed per second whatever the traffic
	 * @param nanoClock a monotonic clock
	 */
	public RetryBudget(int percent, int minPerSecond, LongSupplier nanoClock) {
		this(percent / 100.0, minPerSecond, nanoClock);
	}

	/**
	 * Creates a budget that allows a share of requests that is not a whole percent, such
	 * as the backups of hedged requests.
	 * @param share retries allowed per request, 0 or more
	 * @param minPerSecond retries allowed per second whatever the traffic
	 * @param nanoClock a monotonic clock
	 * @return the budget
	 */
	public static RetryBudget ofShare(double share, int minPerSecond, LongSupplier nanoClock) {
		return new RetryBudget(share, minPerSecond, nanoClock);
	}

	private RetryBudget(double share, int minPerSecond, LongSupplier nanoClock) {
		this.share = share;
		this.minPerSecond = minPerSecond;
		this.nanoClock = nanoClock;
		long now = second(nanoClock.getAsLong());
		for (int i = 0; i < WINDOW_SECONDS; i++) {
			this.seconds.set(i, now);
			this.requests[i] = new LongAdder();
		}
	}

	/**
	 * Counts a request (a first attempt).
	 */
	public void requested() {
		requested(this.nanoClock.getAsLong());
	}

	/**
	 * Counts a request (a first attempt) at a time the caller has already read.
	 * @param nowNanos the budget clock's current time
	 */
	public void requested(long nowNanos) {
		this.requests[bucket(second(nowNanos))].increment();
	}

	/**
	 * Takes one retry from the budget if it has room.
	 * @return whether the retry may go
	 */
	public boolean tryRetry() {
		return tryRetry(this.nanoClock.getAsLong());
	}

	/**
	 * Takes one retry from the budget if it has room, at a time the caller has already
	 * read.
	 * @param nowNanos the budget clock's current time
	 * @return whether the retry may go
	 */
	public boolean tryRetry(long nowNanos) {
		long now = second(nowNanos);
		int bucket = bucket(now);
		long requestsInWindow = 0;
		long retriesInWindow = 0;
		for (int i = 0; i < WINDOW_SECONDS; i++) {
			if (now - this.seconds.get(i) < WINDOW_SECONDS) {
				requestsInWindow += this.requests[i].sum();
				retriesInWindow += this.retries.get(i);
			}
		}
		// The product is exact for every count a window can hold; a share such as 0.2
		// that binary cannot hold exactly is nudged so that 5 requests allow 1 retry.
		long allowed = (long) (requestsInWindow * this.share + 1e-9) + (long) this.minPerSecond * WINDOW_SECONDS;
		if (retriesInWindow >= allowed) {
			return false;
		}
		this.retries.incrementAndGet(bucket);
		return true;
	}

	/**
	 * Counts a retry that was sent without asking the budget, such as a route's own
	 * {@code Retry} filter running the chain again: it spends the budget all the same, so
	 * that the retries that do ask are refused sooner.
	 * @param nowNanos the budget clock's current time
	 */
	public void retried(long nowNanos) {
		this.retries.incrementAndGet(bucket(second(nowNanos)));
	}

	private int bucket(long second) {
		int bucket = (int) Math.floorMod(second, (long) WINDOW_SECONDS);
		long counted = this.seconds.get(bucket);
		if (counted != second && this.seconds.compareAndSet(bucket, counted, second)) {
			// A new second for this bucket: its old counts belong to a second that left
			// the window.
			this.requests[bucket].reset();
			this.retries.set(bucket, 0);
		}
		return bucket;
	}

	private static long second(long nanos) {
		return Math.floorDiv(nanos, 1_000_000_000L);
	}

}
