package dev.gatewaylb.internal.runtime;

import java.util.Objects;
import java.util.function.Function;

import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.settings.ServiceSettings;
import org.jspecify.annotations.Nullable;

/**
 * A feature as the runtime runs it: the feature, and where its settings are in a
 * service's settings. The wiring binds each feature once (one line); the runtime builds
 * every service's state of it and runs its jobs without naming it.
 *
 * @param <C> the feature's settings
 * @param <S> the per-service state
 * @param feature the feature
 * @param settings the feature's block of a service's settings
 */
public record ServiceFeature<C, S>(Feature<C, S> feature, Function<ServiceSettings, C> settings) {

	public ServiceFeature {
		Objects.requireNonNull(feature, "feature");
		Objects.requireNonNull(settings, "settings");
	}

	/**
	 * Binds a feature to its block of a service's settings.
	 * @param <C> the feature's settings
	 * @param <S> the per-service state
	 * @param feature the feature
	 * @param settings the feature's block of a service's settings
	 * @return the binding
	 */
	public static <C, S> ServiceFeature<C, S> of(Feature<C, S> feature, Function<ServiceSettings, C> settings) {
		return new ServiceFeature<>(feature, settings);
	}

	/**
	 * Returns the type of the feature's per-service state.
	 * @return the type
	 */
	public Class<S> stateType() {
		return this.feature.stateType();
	}

	/**
	 * Returns a service's next state of the feature.
	 * @param previous the state in force, or {@code null} for the service's first
	 * @param settings the service's settings
	 * @param service the service
	 * @return the state
	 */
	S next(@Nullable Object previous, ServiceSettings settings, Feature.Context service) {
		return Objects.requireNonNull(
				this.feature.next(stateType().cast(previous), this.settings.apply(settings), service),
				"a feature's state");
	}

}
