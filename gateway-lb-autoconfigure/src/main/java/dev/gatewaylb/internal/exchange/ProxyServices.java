package dev.gatewaylb.internal.exchange;

import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.settings.LiveSettings;

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
 */
public record ProxyServices(LiveSettings settings, ServiceRuntimes runtimes, SplitRouting splits, boolean use404,
		Shadows shadows) {
}
