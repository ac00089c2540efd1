package dev.gatewaylb.internal.balance;

import java.util.Comparator;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One member of a balanced set as the algorithms see it: an address, a weight, and where
 * it runs.
 *
 * @param address {@code host:port}, IPv6 hosts in brackets; the identity under which
 * per-endpoint state is carried across rebuilds and the bytes consistent hashing places
 * on the ring
 * @param weight relative share of traffic, {@code >= 0}; an endpoint of weight 0 stays in
 * the set but receives no picks
 * @param zone the zone it runs in, or {@code null} when discovery does not say
 * @param priority its priority level when discovery gives one ({@code >= 0}, 0 the most
 * preferred), else {@link #NO_PRIORITY}: the level then comes from the zone
 * ({@link LevelSettings#priorityOf})
 */
public record Endpoint(String address, int weight, @Nullable String zone, int priority) {

	/**
	 * The priority of an endpoint whose discovery gives none.
	 */
	public static final int NO_PRIORITY = -1;

	/**
	 * The order a balancer lists its endpoints in, whatever order discovery gave them:
	 * IPv4 literals first, by their numeric value; then other hosts (names, IPv6
	 * literals) by their text; then the port, by its number. {@code 10.0.0.2:80} comes
	 * before {@code 10.0.0.10:80}, and {@code 127.0.0.1:9001} before
	 * {@code 127.0.0.1:10000}. Discovery clients such as Eureka's shuffle their instance
	 * lists at every fetch: a set in this order is the same set in the same order, so
	 * round-robin keeps its sequence and nothing is rebuilt.
	 */
	public static final Comparator<Endpoint> CANONICAL_ORDER = Endpoint::compareCanonically;

	public Endpoint {
		Objects.requireNonNull(address, "address");
		if (address.isEmpty()) {
			throw new IllegalArgumentException("address: \"\" (expected: host:port)");
		}
		if (weight < 0) {
			throw new IllegalArgumentException("weight: " + weight + " (expected: >= 0)");
		}
		if (priority < NO_PRIORITY) {
			throw new IllegalArgumentException("priority: " + priority + " (expected: >= 0)");
		}
	}

	/**
	 * Creates an endpoint with no zone and no priority.
	 * @param address {@code host:port}
	 * @param weight its weight, {@code >= 0}
	 */
	public Endpoint(String address, int weight) {
		this(address, weight, null, NO_PRIORITY);
	}

	/**
	 * Returns this endpoint in a zone, with a priority.
	 * @param zone the zone, or {@code null}
	 * @param priority its priority, or {@link #NO_PRIORITY}
	 * @return the endpoint
	 */
	public Endpoint at(@Nullable String zone, int priority) {
		return new Endpoint(this.address, this.weight, zone, priority);
	}

	/**
	 * Returns the endpoint for a host, port and weight.
	 * @param host a host name or IP literal; IPv6 literals may come with or without
	 * brackets
	 * @param port the port
	 * @param weight the weight, {@code >= 0}
	 * @return the endpoint
	 */
	public static Endpoint of(String host, int port, int weight) {
		return new Endpoint(address(host, port), weight);
	}

	/**
	 * Returns {@code host:port}, with an IPv6 literal in brackets.
	 * @param host a host name or IP literal
	 * @param port the port
	 * @return the address
	 */
	public static String address(String host, int port) {
		Objects.requireNonNull(host, "host");
		boolean bareIpv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
		return bareIpv6 ? "[" + host + "]:" + port : host + ":" + port;
	}

	private static int compareCanonically(Endpoint a, Endpoint b) {
		int colonA = a.address.lastIndexOf(':');
		int colonB = b.address.lastIndexOf(':');
		String hostA = (colonA < 0) ? a.address : a.address.substring(0, colonA);
		String hostB = (colonB < 0) ? b.address : b.address.substring(0, colonB);
		long ipA = ipv4(hostA);
		long ipB = ipv4(hostB);
		int byHost;
		if (ipA >= 0 && ipB >= 0) {
			byHost = Long.compare(ipA, ipB);
		}
		else if (ipA >= 0 || ipB >= 0) {
			byHost = (ipA >= 0) ? -1 : 1;
		}
		else {
			byHost = hostA.compareTo(hostB);
		}
		if (byHost != 0) {
			return byHost;
		}
		int byPort = Integer.compare(port(a.address, colonA), port(b.address, colonB));
		return (byPort != 0) ? byPort : a.address.compareTo(b.address);
	}

	/**
	 * Returns the value of a dotted-quad IPv4 literal, or -1 if {@code host} is not one.
	 */
	private static long ipv4(String host) {
		long value = 0;
		int octets = 0;
		int octet = -1;
		for (int i = 0; i <= host.length(); i++) {
			char c = (i < host.length()) ? host.charAt(i) : '.';
			if (c >= '0' && c <= '9') {
				octet = ((octet < 0) ? 0 : octet * 10) + (c - '0');
				if (octet > 255) {
					return -1;
				}
			}
			else if (c == '.' && octet >= 0 && octets < 4) {
				value = (value << 8) | octet;
				octets++;
				octet = -1;
			}
			else {
				return -1;
			}
		}
		return (octets == 4) ? value : -1;
	}

	private static int port(String address, int colon) {
		try {
			return (colon < 0) ? -1 : Integer.parseInt(address, colon + 1, address.length(), 10);
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

}
