package dev.gatewaylb.internal.discovery;

import java.net.URI;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.settings.SplitSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.event.RefreshRoutesResultEvent;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ApplicationListener;

/**
 * Tracks every service that a route names, so its runtime is built before its first
 * request and a request may name it: {@code lb://id} and {@code lb:ws://id} routes, and
 * for a route to a split, the split's targets. Runs whenever Spring Cloud Gateway has
 * (re)loaded its routes, which it does at start-up and on every route refresh.
 */
public final class RouteServices implements ApplicationListener<RefreshRoutesResultEvent> {

	private static final Log logger = LogFactory.getLog(RouteServices.class);

	private final Consumer<Set<String>> routed;

	private final LiveSettings settings;

	/**
	 * Creates the listener.
	 * @param routed takes every service the routes name, in place of those before, such
	 * as the service runtimes' own {@code routed}
	 * @param settings the settings in force, for the splits
	 */
	public RouteServices(Consumer<Set<String>> routed, LiveSettings settings) {
		this.routed = routed;
		this.settings = settings;
	}

	@Override
	public void onApplicationEvent(RefreshRoutesResultEvent event) {
		if (event.isSuccess() && event.getSource() instanceof RouteLocator locator) {
			locator.getRoutes()
				.map(Route::getUri)
				.mapNotNull(RouteServices::serviceId)
				.collect(TreeSet<String>::new, Set::add)
				.subscribe(this::track, (error) -> logger.warn("Could not list the gateway's routes", error));
		}
	}

	private void track(Set<String> named) {
		Set<String> services = new TreeSet<>();
		for (String name : named) {
			SplitSettings split = this.settings.get().split(name);
			if (split == null) {
				services.add(name);
			}
			else {
				split.split().targets().forEach((target) -> services.add(target.service()));
			}
		}
		this.routed.accept(services);
	}

	/**
	 * Returns the service a route URI balances, or {@code null} for other URIs.
	 * @param uri a route URI such as {@code lb://catalog} or {@code lb:ws://chat}
	 * @return the service id
	 */
	static @Nullable String serviceId(URI uri) {
		if (!"lb".equalsIgnoreCase(uri.getScheme())) {
			return null;
		}
		if (uri.isOpaque()) {
			// lb:ws://chat: the load-balanced part follows the prefix.
			return serviceId(URI.create("lb://" + hostPart(uri.getSchemeSpecificPart())));
		}
		String host = uri.getHost();
		return (host != null) ? host.toLowerCase(Locale.ROOT) : null;
	}

	private static String hostPart(String schemeSpecific) {
		int start = schemeSpecific.indexOf("//");
		return (start < 0) ? schemeSpecific : schemeSpecific.substring(start + 2);
	}

}
