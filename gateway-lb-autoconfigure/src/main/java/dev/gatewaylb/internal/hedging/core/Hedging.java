package dev.gatewaylb.internal.hedging.core;

import java.util.function.LongSupplier;

import dev.gatewaylb.internal.retry.RetryBudget;

/**
 * One service's hedged requests: when an attempt gets a backup ({@link HedgeDelay}), and
 * how many backups the service may receive ({@link RetryBudget} over a share of requests,
 * with no floor). The budget keeps backups at or under {@code max-extra-load} of the
 * requests of the last {@value RetryBudget#WINDOW_SECONDS} seconds whatever the latency
 * does: when every answer is slow, the delay says "hedge all of them" and the budget says
 * no.
 */
public final class Hedging {

	private final HedgeDelay delay;

	private final RetryBudget budget;

	/**
	 * Creates the hedging of a service.
	 * @param maxExtraLoad backups as a fraction of requests, above 0 and at most 1
	 * @param minDelayNanos the shortest wait before a backup
	 * @param nanoClock a monotonic clock
	 */
	public Hedging(double maxExtraLoad, long minDelayNanos, LongSupplier nanoClock) {
		this.delay = new HedgeDelay(maxExtraLoad, minDelayNanos);
		this.budget = RetryBudget.ofShare(maxExtraLoad, 0, nanoClock);
	}

	/**
	 * Returns the delay after which an attempt gets a backup.
	 * @return the delay in nanoseconds, or {@link HedgeDelay#UNKNOWN} while too few
	 * answers have been seen
	 */
	public long delayNanos() {
		return this.delay.delayNanos();
	}

	/**
	 * Counts a request that may be hedged, once, however many attempts it makes.
	 * @param nowNanos the clock's current time
	 */
	public void requested(long nowNanos) {
		this.budget.requested(nowNanos);
	}

	/**
	 * Takes a backup from the budget if it has room.
	 * @param nowNanos the clock's current time
	 * @return whether the backup may go
	 */
	public boolean tryBackup(long nowNanos) {
		return this.budget.tryRetry(nowNanos);
	}

	/**
	 * Records an attempt's wait for its response headers ({@link HedgeDelay#record}).
	 * @param latencyNanos the wait
	 */
	public void record(long latencyNanos) {
		this.delay.record(latencyNanos);
	}

	/**
	 * Closes the current latency interval ({@link HedgeDelay#roll}); one thread, once an
	 * interval.
	 */
	public void roll() {
		this.delay.roll();
	}

	/**
	 * Returns the latency window.
	 * @return the delay's window
	 */
	public HedgeDelay delay() {
		return this.delay;
	}

}
