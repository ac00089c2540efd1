package dev.gatewaylb.control;

import java.time.Duration;
import java.util.Objects;
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
		Runnable guarded = guarded(name, job);
		Future<?>[] future = new Future<?>[1];
		submit(() -> future[0] = this.executor.scheduleWithFixedDelay(guarded, nanos, nanos, TimeUnit.NANOSECONDS));
		return () -> cancel(future[0]);
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

	/**
	 * Stops the thread for good; idempotent. Returns once no task runs any more, or after
	 * {@link #STOP_TIMEOUT} if one does not end when interrupted.
	 */
	public void stop() {
		this.stopped = true;
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
	 * instead of ending a job's schedule.
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
			catch (RuntimeException ex) {
				logger.log(System.Logger.Level.ERROR, "gateway-lb control " + name + " failed", ex);
			}
		};
	}

}
