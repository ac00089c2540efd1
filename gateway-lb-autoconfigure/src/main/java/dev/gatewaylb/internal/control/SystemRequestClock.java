package dev.gatewaylb.internal.control;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The request clock of a running gateway: {@link System#nanoTime()}, the control thread's
 * clock, and one daemon timer thread of its own ({@value #THREAD_NAME}). Its tasks are a
 * few instructions each (a compare-and-set, a hand-over to an event loop), so one thread
 * serves every request; a cancelled timer leaves its queue at once.
 */
final class SystemRequestClock implements RequestClock {

	static final String THREAD_NAME = "gateway-lb-timer";

	private static final System.Logger logger = System.getLogger(SystemRequestClock.class.getName());

	private final ScheduledThreadPoolExecutor timers;

	SystemRequestClock() {
		this.timers = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, THREAD_NAME);
			thread.setDaemon(true);
			return thread;
		});
		this.timers.setRemoveOnCancelPolicy(true);
		this.timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	@Override
	public long nanoTime() {
		return System.nanoTime();
	}

	@Override
	public long currentTimeMillis() {
		return System.currentTimeMillis();
	}

	@Override
	public Timer schedule(Runnable task, long delay, TimeUnit unit) {
		Runnable guarded = () -> {
			try {
				task.run();
			}
			catch (RuntimeException | Error ex) {
				logger.log(System.Logger.Level.ERROR, "a request timer failed", ex);
			}
		};
		try {
			ScheduledFuture<?> future = this.timers.schedule(guarded, Math.max(0, delay), unit);
			return () -> future.cancel(false);
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the deadline is due now, so that no request waits for a timer
			// that will never run.
			ForkJoinPool.commonPool().execute(guarded);
			return Timer.NONE;
		}
	}

	void stop() {
		this.timers.shutdownNow();
	}

}
