package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.SplitSettings;

/**
 * The services a request may name: those routes name, those configured under
 * {@code gateway.lb.services}, every split's targets, and those discovery lists
 * ({@code DiscoveryClient.getServices()}). A route that takes its {@code lb://} host from
 * request data would otherwise make one runtime, pool, meter set and child context per
 * distinct id a client sends, polled every second for ever.
 * <p>
 * Each source's ids are replaced whole by one writer (routes on a route refresh, the
 * others on the control thread) and read as one volatile immutable set: a request that
 * misses the registry reads three sets, no lock.
 */
final class KnownServices {

	/**
	 * How long a tracked service must have been unknown before its runtime is removed: a
	 * registry that lists a service without it for one poll does not cost it its
	 * per-endpoint state.
	 */
	static final Duration FORGET_AFTER = Duration.ofSeconds(30);

	private volatile Set<String> routed = Set.of();

	private volatile Set<String> configured = Set.of();

	private volatile Set<String> discovered = Set.of();

	/**
	 * Done once discovery answered (or failed to answer) its first listing: before it, a
	 * request for an id no route or configuration names waits for it.
	 */
	final CompletableFuture<Void> listed = new CompletableFuture<>();

	boolean contains(String serviceId) {
		String id = serviceId.toLowerCase(Locale.ROOT);
		return this.configured.contains(id) || this.routed.contains(id) || this.discovered.contains(id);
	}

	void routed(Collection<String> serviceIds) {
		this.routed = lowerCase(serviceIds);
	}

	void configured(GatewayLbSettings settings) {
		Set<String> ids = new HashSet<>(settings.configuredServices());
		for (SplitSettings split : settings.splits().values()) {
			split.split().targets().forEach((target) -> ids.add(target.service()));
		}
		ids.addAll(settings.namedServices());
		this.configured = lowerCase(ids);
	}

	void discovered(Collection<String> serviceIds) {
		this.discovered = lowerCase(serviceIds);
		this.listed.complete(null);
	}

	private static Set<String> lowerCase(Collection<String> ids) {
		Set<String> lower = new HashSet<>(ids.size() * 2);
		for (String id : ids) {
			if (id != null) {
				lower.add(id.toLowerCase(Locale.ROOT));
			}
		}
		return Set.copyOf(lower);
	}

}
