package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.internal.feature.Feature;

/**
 * Runs a job for every service balanced here, at an interval, on the control thread: the
 * one skeleton of every per-service job (a feature's, latency and success-rate ejection).
 * One service's failure is logged once and keeps no other from its run
 * ({@link Separately}).
 */
final class EveryService {

	private EveryService() {
	}

	/**
	 * Schedules a job.
	 * @param control the control thread
	 * @param name the job's name
	 * @param interval how often it runs
	 * @param runtimes every service's runtime, read at each run
	 * @param step what it does for one service
	 * @return the scheduled job
	 */
	static ControlThread.Job start(ControlThread control, String name, Duration interval,
			Supplier<List<ServiceRuntime>> runtimes, Consumer<ServiceRuntime> step) {
		Separately separately = new Separately(name);
		return control.every(name, interval, () -> separately.forEach(runtimes.get(), ServiceRuntime::id, (runtime) -> {
			if (runtime.isBalancedHere()) {
				step.accept(runtime);
			}
		}));
	}

	/**
	 * Schedules a feature's job, handed each service's state of the feature.
	 * @param <S> the feature's per-service state
	 * @param control the control thread
	 * @param job the job
	 * @param stateType the type of the feature's state
	 * @param runtimes every service's runtime, read at each run
	 * @return the scheduled job
	 */
	static <S> ControlThread.Job start(ControlThread control, Feature.Job<S> job, Class<S> stateType,
			Supplier<List<ServiceRuntime>> runtimes) {
		return start(control, job.name(), job.interval(), runtimes,
				(runtime) -> job.step().run(runtime.feature(stateType), runtime));
	}

}
