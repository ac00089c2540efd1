package dev.gatewaylb.internal.exchange;

import dev.gatewaylb.internal.observation.AttemptObservations;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.settings.LiveSettings;
import org.jspecify.annotations.Nullable;

/**
 * What every proxied exchange needs from the gateway, shared by all of them: the settings
 * in force, every service's runtime, the split routing, what a service with no endpoint
 * answers, and the sender of copies to shadow services.
 *
 * @param settings the settings in force
 * @param runtimes every service's runtime
 * @param splits chooses a split's target
 * @param use404 whether a service without an endpoint to pick answers 404 instead of 503
 * @param shadows sends copies of requests to shadow services
 * @param observations starts each attempt's observation, or {@code null} when nothing
 * observes attempts
 */
public record ProxyServices(LiveSettings settings, ServiceRuntimes runtimes, SplitRouting splits, boolean use404,
		Shadows shadows, @Nullable AttemptObservations observations) {

	/**
	 * Creates the services of a gateway that observes no attempt.
	 */
	public ProxyServices(LiveSettings settings, ServiceRuntimes runtimes, SplitRouting splits, boolean use404,
			Shadows shadows) {
		this(settings, runtimes, splits, use404, shadows, null);
	}

}
