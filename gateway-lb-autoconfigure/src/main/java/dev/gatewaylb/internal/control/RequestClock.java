package dev.gatewaylb.internal.control;

import java.util.concurrent.TimeUnit;

/**
 * The request path's source of time and timers: every deadline and idle limit of an
 * exchange (a wait for a place, a shadow copy's time-out, a body's idle and rate limits,
 * a dial's delays) reads this clock and schedules here, never {@code System.nanoTime()},
 * {@code Mono.delay} or a scheduler of its own. Its time is the control thread's, the one
 * of every latency sample and window, so that a deadline and the samples it is compared
 * with agree; tests replace both with one they move by hand.
 * <p>
 * Thread-safe. A task runs on the clock's timer thread, not the caller's: one that must
 * touch an exchange hands itself to the exchange's event loop.
 */
public interface RequestClock {

	/**
	 * Returns the clock's current time.
	 * @return nanoseconds, on the control thread's scale
	 */
	long nanoTime();

	/**
	 * Returns the wall-clock time, for what is compared with dates a peer sends (a
	 * cookie's {@code Expires}).
	 * @return milliseconds since the epoch
	 */
	long currentTimeMillis();

	/**
	 * Runs a task once, after a delay.
	 * @param task the task
	 * @param delay the delay
	 * @param unit the delay's unit
	 * @return what cancels the task if it has not run
	 */
	Timer schedule(Runnable task, long delay, TimeUnit unit);

	/**
	 * A task scheduled once.
	 */
	@FunctionalInterface
	interface Timer {

		/**
		 * A timer that was never armed.
		 */
		Timer NONE = () -> {
		};

		/**
		 * Cancels the task if it has not run; idempotent.
		 */
		void cancel();

	}

}
