package dev.gatewaylb.autoconfigure;

import java.util.List;

import dev.gatewaylb.internal.control.ScheduledControlThread;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.SmartLifecycle;

/**
 * Starts gateway-lb's background work on the control thread, and ends it, once for all of
 * it: it starts before the web server takes requests, so that the services routes name
 * are being built when the first requests arrive, and stops after the web server stopped.
 * Stopping ends the control thread first, so that no task runs while the pools close.
 */
final class ControlLifecycle implements SmartLifecycle {

	private final ScheduledControlThread control;

	private final List<Runnable> starts;

	private final List<Runnable> stops;

	private volatile boolean running;

	/**
	 * Creates the lifecycle.
	 * @param control the control thread
	 * @param starts what starts the jobs, in order
	 * @param stops what to release once the control thread has stopped, in order
	 */
	ControlLifecycle(ScheduledControlThread control, List<Runnable> starts, List<Runnable> stops) {
		this.control = control;
		this.starts = List.copyOf(starts);
		this.stops = List.copyOf(stops);
	}

	@Override
	public void start() {
		this.starts.forEach(Runnable::run);
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.control.stop();
		this.stops.forEach(Runnable::run);
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE - 1;
	}

}
