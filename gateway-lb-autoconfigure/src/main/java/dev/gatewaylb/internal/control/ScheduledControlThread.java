package dev.gatewaylb.internal.control;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The {@link ControlThread} of a running gateway: one daemon thread named
 * {@value #THREAD_NAME} of a {@link ScheduledThreadPoolExecutor}, on
 * {@link System#nanoTime()}, which is the clock the executor schedules by.
 * <p>
 * {@link #stop()} ends it for good: tasks already queued are dropped, a task that is
 * running is interrupted and waited for (up to {@link #STOP_TIMEOUT}), so that nothing
 * runs after it returns; a task that is building a service's Spring Cloud LoadBalancer
 * context must not outlive the application context it asks for beans.
 */
public final class ScheduledControlThread implements ControlThread, AutoCloseable {

	/**
	 * The thread's name.
	 */
	public static final String THREAD_NAME = "gateway-lb-control";

	/**
	 * The longest {@link #stop()} waits for a running task.
	 */
	static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

	private static final System.Logger logger = System.getLogger(ScheduledControlThread.class.getName());

	private final ScheduledThreadPoolExecutor executor;

	private final List<NamedJob> jobs = new CopyOnWriteArrayList<>();

	private final SystemRequestClock requestClock = new SystemRequestClock();

	private volatile @Nullable Thread thread;

	private volatile boolean stopped;

	/**
	 * Creates the thread; it starts with the first task.
	 */
	public ScheduledControlThread() {
		this.executor = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread created = new Thread(task, THREAD_NAME);
			created.setDaemon(true);
			this.thread = created;
			return created;
		});
		// A cancelled job leaves the queue at once instead of at its next due time.
		this.executor.setRemoveOnCancelPolicy(true);
		this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	@Override
	public void execute(Runnable task) {
		Runnable guarded = guarded("task", task);
		submit(() -> this.executor.execute(guarded));
	}

	@Override
	public Job every(String name, Duration interval, Runnable job) {
		Objects.requireNonNull(name, "name");
		long nanos = interval.toNanos();
		if (nanos <= 0) {
			throw new IllegalArgumentException("interval: " + interval + " (expected: > 0)");
		}
		NamedJob named = new NamedJob(name, interval, System.nanoTime());
		Runnable guarded = guarded(name, () -> {
			try {
				job.run();
			}
			catch (Throwable ex) {
				named.failures++;
				throw ex;
			}
			finally {
				named.lastEndedNanos = System.nanoTime();
			}
		});
		Future<?>[] future = new Future<?>[1];
		this.jobs.add(named);
		submit(() -> future[0] = this.executor.scheduleWithFixedDelay(guarded, nanos, nanos, TimeUnit.NANOSECONDS));
		return () -> {
			this.jobs.remove(named);
			cancel(future[0]);
		};
	}

	@Override
	public List<JobStatus> jobStatuses() {
		return this.jobs.stream()
			.map((job) -> new JobStatus(job.name, job.interval, job.lastEndedNanos, job.failures))
			.toList();
	}

	@Override
	public Job after(Duration delay, Runnable task) {
		Runnable guarded = guarded("task", task);
		Future<?>[] future = new Future<?>[1];
		submit(() -> future[0] = this.executor.schedule(guarded, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS));
		return () -> cancel(future[0]);
	}

	@Override
	public <T> T call(Duration timeout, Supplier<T> task) {
		if (Thread.currentThread() == this.thread) {
			return task.get();
		}
		if (this.stopped) {
			throw new IllegalStateException(THREAD_NAME + " is stopped");
		}
		Future<T> result;
		try {
			result = this.executor.submit(() -> {
				if (this.stopped) {
					throw new IllegalStateException(THREAD_NAME + " is stopped");
				}
				return task.get();
			});
		}
		catch (RejectedExecutionException ex) {
			throw new IllegalStateException(THREAD_NAME + " is stopped", ex);
		}
		try {
			return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			result.cancel(false);
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while waiting for " + THREAD_NAME, ex);
		}
		catch (TimeoutException ex) {
			result.cancel(false);
			throw new IllegalStateException(THREAD_NAME + " did not run the task within " + timeout.toMillis() + " ms",
					ex);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new IllegalStateException("task on " + THREAD_NAME + " failed", ex.getCause());
		}
	}

	@Override
	public long nanoTime() {
		return System.nanoTime();
	}

	@Override
	public RequestClock requestClock() {
		return this.requestClock;
	}

	/**
	 * Stops the thread for good; idempotent. Returns once no task runs any more, or after
	 * {@link #STOP_TIMEOUT} if one does not end when interrupted.
	 */
	public void stop() {
		this.stopped = true;
		this.requestClock.stop();
		this.executor.shutdownNow();
		try {
			if (!this.executor.awaitTermination(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				logger.log(System.Logger.Level.WARNING, THREAD_NAME + " did not stop within " + STOP_TIMEOUT.toMillis()
						+ " ms; a task of it is still running");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Returns whether the thread has been stopped.
	 * @return whether stopped
	 */
	public boolean isStopped() {
		return this.stopped;
	}

	/**
	 * Stops the thread, as {@link #stop()}.
	 */
	@Override
	public void close() {
		stop();
	}

	private void submit(Runnable schedule) {
		if (this.stopped) {
			logger.log(System.Logger.Level.DEBUG, THREAD_NAME + " is stopped; task dropped");
			return;
		}
		try {
			schedule.run();
		}
		catch (RejectedExecutionException ex) {
			logger.log(System.Logger.Level.DEBUG, THREAD_NAME + " is stopped; task dropped", ex);
		}
	}

	private static void cancel(@Nullable Future<?> future) {
		if (future != null) {
			future.cancel(false);
		}
	}

	/**
	 * Returns the task, made to do nothing once the thread stopped and to log its failure
	 * instead of ending a job's schedule. Whatever it throws: an executor ends a periodic
	 * job's schedule for good, silently, at its first throw, and an {@link Error} (a
	 * class that could not be loaded, a stack overflow in a listener) must not stop the
	 * discovery poll or the rollout tick for the rest of the process's life.
	 */
	private Runnable guarded(String name, Runnable task) {
		Objects.requireNonNull(task, "task");
		return () -> {
			if (this.stopped) {
				return;
			}
			try {
				task.run();
			}
			catch (Throwable ex) {
				logger.log(System.Logger.Level.ERROR, "gateway-lb control " + name + " failed", ex);
			}
		};
	}

	/**
	 * A named job's state: written by the control thread only, read by any.
	 */
	private static final class NamedJob {

		final String name;

		final Duration interval;

		volatile long lastEndedNanos;

		// One writer, the control thread: a plain increment of a volatile is safe.
		volatile long failures;

		NamedJob(String name, Duration interval, long startedNanos) {
			this.name = name;
			this.interval = interval;
			this.lastEndedNanos = startedNanos;
		}

	}

}
