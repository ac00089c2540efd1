package dev.gatewaylb.internal.settings;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.gatewaylb.config.DnsProperties;

/**
 * How hostname endpoints are resolved, {@code gateway.lb.dns} checked (the binding record
 * validates each key): the cache's bounds and the servers to ask. Taken at start-up.
 *
 * @param minTtl the shortest time an answer is kept, whole seconds
 * @param maxTtl the longest time an answer is kept, whole seconds
 * @param negativeTtl how long a failure to resolve is kept, whole seconds
 * @param servers the DNS servers to ask, in order; empty for the system's
 */
public record DnsSettings(Duration minTtl, Duration maxTtl, Duration negativeTtl, List<InetSocketAddress> servers) {

	public DnsSettings {
		servers = List.copyOf(servers);
	}

	/**
	 * Returns the keys that differ in {@code next}: the resolver is built once, at
	 * start-up, so each of them is.
	 * @param next the settings of a refresh
	 * @return the differing keys
	 */
	public List<String> keysChangedIn(DnsSettings next) {
		List<String> changed = new ArrayList<>();
		if (!this.minTtl.equals(next.minTtl)) {
			changed.add("gateway.lb.dns.min-ttl");
		}
		if (!this.maxTtl.equals(next.maxTtl)) {
			changed.add("gateway.lb.dns.max-ttl");
		}
		if (!this.negativeTtl.equals(next.negativeTtl)) {
			changed.add("gateway.lb.dns.negative-ttl");
		}
		if (!this.servers.equals(next.servers)) {
			changed.add("gateway.lb.dns.servers");
		}
		return changed;
	}

	static DnsSettings map(DnsProperties dns) {
		return new DnsSettings(dns.minTtl(), dns.maxTtl(), dns.negativeTtl(), dns.serverAddresses());
	}

}
