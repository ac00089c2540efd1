package dev.gatewaylb.internal.feature;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * One feature's part of every service's runtime: its per-service state and the jobs that
 * keep it. The runtime builds each service's state when it builds the service's runtime,
 * on the control thread, from the state of the runtime it replaces and the feature's own
 * settings (the settings root hands the feature its block); a request finds it with
 * {@code runtime.feature(stateType)}, one read of an array of a few entries.
 * <p>
 * A feature that a service does not use still has a state for it: a shared one that does
 * nothing, so that the request path asks no question before it calls the feature.
 *
 * @param <C> the feature's settings
 * @param <S> the per-service state
 */
public interface Feature<C, S> {

	/**
	 * Returns the type of the per-service state, by which the runtime finds it: one type
	 * per feature.
	 * @return the type
	 */
	Class<S> stateType();

	/**
	 * Returns the state of a service's next runtime. Carries over what the new settings
	 * did not change (counters always, so that a refresh resets none), the way the
	 * balancer carries endpoint state. Runs on the control thread.
	 * @param previous the state of the runtime in force, or {@code null} for the
	 * service's first
	 * @param settings the feature's settings for the service
	 * @param service the service the state is for
	 * @return the state, {@code previous} itself when nothing changed
	 */
	S next(@Nullable S previous, C settings, Context service);

	/**
	 * Returns the jobs that keep the feature's state, each run for every service balanced
	 * here, at its interval, on the control thread.
	 * @return the jobs, empty by default
	 */
	default List<Job<S>> jobs() {
		return List.of();
	}

	/**
	 * What a feature's state is built for: the service's id and clock.
	 *
	 * @param serviceId the service id, in lower case
	 * @param nanoClock the service's clock, the one of its latency samples, deadlines and
	 * windows
	 * @param wallMillis the wall clock, for what other replicas read (a cookie's issue
	 * time)
	 */
	record Context(String serviceId, LongSupplier nanoClock, LongSupplier wallMillis) {

		public Context {
			Objects.requireNonNull(serviceId, "serviceId");
			Objects.requireNonNull(nanoClock, "nanoClock");
			Objects.requireNonNull(wallMillis, "wallMillis");
		}

	}

	/**
	 * A job of a feature, run for each service in turn (one service's failure does not
	 * keep the others from their run).
	 *
	 * @param <S> the per-service state
	 * @param name the job's name, in the control thread's status and logs
	 * @param interval how often it runs
	 * @param step what it does for one service
	 */
	record Job<S>(String name, Duration interval, Step<S> step) {

		public Job {
			Objects.requireNonNull(name, "name");
			Objects.requireNonNull(interval, "interval");
			Objects.requireNonNull(step, "step");
		}

	}

	/**
	 * What a job does for one service.
	 *
	 * @param <S> the per-service state
	 */
	@FunctionalInterface
	interface Step<S> {

		/**
		 * Runs the job for one service, on the control thread.
		 * @param state the service's state of the feature
		 * @param service the service
		 */
		void run(S state, ServiceView service);

	}

}
