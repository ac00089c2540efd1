package dev.gatewaylb.internal.settings;

import java.net.InetSocketAddress;
import java.time.Duration;
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

	static DnsSettings map(DnsProperties dns) {
		return new DnsSettings(dns.minTtl(), dns.maxTtl(), dns.negativeTtl(), dns.serverAddresses());
	}

}
