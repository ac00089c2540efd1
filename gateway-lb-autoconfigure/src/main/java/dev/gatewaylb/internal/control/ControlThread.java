package dev.gatewaylb.internal.control;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Runs gateway-lb's background work one task at a time, never on an event loop and never
 * on the request path: the tasks given with {@link #execute}, the named jobs of
 * {@link #every}, the one-shot tasks of {@link #after}, and the blocking calls of
 * {@link #call}. Tasks never run concurrently with each other, so the state they alone
 * touch needs no lock; each runs on whatever inputs are newest when it runs, so an older
 * input never overwrites a newer one.
 * <p>
 * A task that throws, whatever it throws ({@link Error}s too), is logged and the others
 * go on; a periodic job keeps its schedule. Once the thread has stopped nothing runs any
 * more, and tasks given to it are dropped.
 * <p>
 * {@link #nanoTime()} is the clock the thread schedules by, the same clock as the
 * balancers', the ejections' and the rollouts': a test that replaces the thread moves
 * them all at once.
 */
public interface ControlThread extends Executor {

	/**
	 * Runs a task soon, after the tasks given before it. Never blocks, never runs the
	 * task on the caller's thread: callable from an event loop.
	 * @param task the task
	 */
	@Override
	void execute(Runnable task);

	/**
	 * Runs a job every {@code interval}, the first time one interval from now: the next
	 * run is one interval after the previous one ended, so runs never pile up behind a
	 * slow one.
	 * @param name the job's name, for logs
	 * @param interval the time between the end of one run and the start of the next,
	 * above 0
	 * @param job the job
	 * @return the job's handle, which cancels it
	 */
	Job every(String name, Duration interval, Runnable job);

	/**
	 * Runs a task once, {@code delay} from now.
	 * @param delay the delay, 0 or more
	 * @param task the task
	 * @return the task's handle, which cancels it
	 */
	Job after(Duration delay, Runnable task);

	/**
	 * Runs a task on the thread and waits for its result: for callers off the event
	 * loops, such as an actuator write. Called from the thread itself, runs it at once.
	 * @param <T> the result's type
	 * @param timeout the longest wait
	 * @param task the task
	 * @return what the task returned
	 * @throws IllegalStateException when the task did not finish within the timeout, the
	 * thread has stopped, or the caller was interrupted; a runtime exception the task
	 * threw is thrown as it is
	 */
	<T> T call(Duration timeout, Supplier<T> task);

	/**
	 * Returns the clock's current time: a monotonic clock in nanoseconds.
	 * @return nanoseconds, comparable only with other readings of this clock
	 */
	long nanoTime();

	/**
	 * Returns the request path's clock and timers: the same time as {@link #nanoTime()},
	 * and timers that run off the control thread, so that a busy job never delays a
	 * request's deadline.
	 * @return the clock
	 */
	RequestClock requestClock();

	/**
	 * Returns the named jobs of {@link #every} that are not cancelled, each with when its
	 * last run ended: what tells a job that runs from one stuck (a health indicator reads
	 * it from any thread).
	 * @return the jobs, in the order they were started
	 */
	List<JobStatus> jobStatuses();

	/**
	 * A named job as it stands.
	 *
	 * @param name the job's name
	 * @param interval its interval
	 * @param lastEndedNanos when its last run ended, by {@link #nanoTime()}; when it was
	 * started if it has not run yet
	 * @param failures how many of its runs threw
	 */
	record JobStatus(String name, Duration interval, long lastEndedNanos, long failures) {

		/**
		 * Returns how long ago the job's last run ended.
		 * @param nowNanos the clock's current time
		 * @return the age
		 */
		public Duration age(long nowNanos) {
			return Duration.ofNanos(Math.max(0, nowNanos - this.lastEndedNanos));
		}

	}

	/**
	 * A scheduled job or task.
	 */
	@FunctionalInterface
	interface Job {

		/**
		 * Cancels the job: a run in progress finishes, no other starts.
		 */
		void cancel();

	}

}
