package dev.gatewaylb.internal.exchange;

import java.util.List;
import java.util.function.Supplier;

import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.settings.LiveSettings;

import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;

/**
 * What every proxied exchange needs from the gateway, shared by all of them: the settings
 * in force, every service's runtime, the split routing, and what a service with no
 * endpoint answers.
 *
 * @param settings the settings in force
 * @param runtimes every service's runtime
 * @param splits chooses a split's target
 * @param use404 whether a service without an endpoint to pick answers 404 instead of 503
 * @param headersFilters the gateway's request header filters, which a mirrored request's
 * headers go through as the primary's do
 */
public record ProxyServices(LiveSettings settings, ServiceRuntimes runtimes, SplitRouting splits, boolean use404,
		Supplier<List<HttpHeadersFilter>> headersFilters) {
}
