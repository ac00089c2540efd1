package dev.gatewaylb.config;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.gatewaylb.request.Cidr;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the upstreams resolve hostname endpoints, under {@code gateway.lb.dns}: one
 * asynchronous resolver (Reactor Netty's) and one cache shared by every service. Taken at
 * start-up.
 *
 * @param minTtl Shortest time an answer is cached, whatever its TTL says (whole seconds).
 * @param maxTtl Longest time an answer is cached, whatever its TTL says (whole seconds):
 * an endpoint whose address changes is dialled at its new address at most this late.
 * @param negativeTtl How long a failure to resolve (no such name, no answer) is cached,
 * so that a name that does not resolve is asked once per period, not once per request
 * (whole seconds).
 * @param servers DNS servers to ask, as host:port with an IP address (IPv6 in brackets);
 * empty: the system's resolvers (/etc/resolv.conf). /etc/hosts is honoured either way.
 */
public record DnsProperties(@DefaultValue("0s") Duration minTtl, @DefaultValue("30s") Duration maxTtl,
		@DefaultValue("2s") Duration negativeTtl, @Nullable List<String> servers) {

	/**
	 * The longest TTL: a day. An answer kept longer keeps sending an endpoint's traffic
	 * to an address it left a day ago. Declared before NONE, which is checked against it.
	 */
	static final Duration MAX_TTL = Duration.ofDays(1);

	/**
	 * A dns block that sets nothing.
	 */
	public static final DnsProperties NONE = new DnsProperties(Duration.ZERO, Duration.ofSeconds(30),
			Duration.ofSeconds(2), null);

	public DnsProperties {
		servers = (servers != null) ? List.copyOf(servers) : List.of();
		check("min-ttl", minTtl);
		check("max-ttl", maxTtl);
		check("negative-ttl", negativeTtl);
		if (minTtl.compareTo(maxTtl) > 0) {
			throw new IllegalArgumentException("min-ttl: " + Durations.format(minTtl) + " (expected: at most max-ttl, "
					+ Durations.format(maxTtl) + ")");
		}
		for (String server : servers) {
			address(server);
		}
	}

	/**
	 * Returns the servers as socket addresses, in order.
	 * @return the addresses, empty for the system's resolvers
	 */
	public List<InetSocketAddress> serverAddresses() {
		List<InetSocketAddress> addresses = new ArrayList<>(this.servers.size());
		for (String server : this.servers) {
			addresses.add(address(server));
		}
		return addresses;
	}

	/**
	 * Parses {@code host:port}, the host an IP address: a DNS server given by name would
	 * need a DNS server to be found.
	 */
	private static InetSocketAddress address(String server) {
		int colon = server.lastIndexOf(':');
		String host = (colon > 0) ? server.substring(0, colon).trim() : "";
		if (host.startsWith("[") && host.endsWith("]")) {
			host = host.substring(1, host.length() - 1);
		}
		InetAddress address = host.isEmpty() ? null : Cidr.parseAddress(host);
		int port = -1;
		try {
			port = (colon > 0) ? Integer.parseInt(server.substring(colon + 1).trim()) : -1;
		}
		catch (NumberFormatException ex) {
			// Reported below.
		}
		if (address == null || port < 1 || port > 65535) {
			throw new IllegalArgumentException("servers: '" + server
					+ "' (expected: an IP address and a port, such as 10.0.0.2:53 or [fd00::2]:53)");
		}
		return new InetSocketAddress(address, port);
	}

	private static void check(String key, Duration ttl) {
		if (ttl.isNegative() || ttl.getNano() != 0 || ttl.compareTo(MAX_TTL) > 0) {
			throw new IllegalArgumentException(key + ": " + Durations.format(ttl) + " (expected: whole seconds, 0s to "
					+ Durations.format(MAX_TTL) + ")");
		}
	}

}
