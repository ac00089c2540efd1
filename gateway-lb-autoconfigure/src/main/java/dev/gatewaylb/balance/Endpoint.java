package dev.gatewaylb.balance;

import java.util.Objects;

/**
 * One member of a balanced set as the algorithms see it: an address and a weight.
 *
 * @param address {@code host:port}, IPv6 hosts in brackets; the identity under which
 * per-endpoint state is carried across rebuilds and the bytes consistent hashing places
 * on the ring
 * @param weight relative share of traffic, {@code >= 0}; an endpoint of weight 0 stays in
 * the set but receives no picks
 */
public record Endpoint(String address, int weight) {

	public Endpoint {
		Objects.requireNonNull(address, "address");
		if (address.isEmpty()) {
			throw new IllegalArgumentException("address: \"\" (expected: host:port)");
		}
		if (weight < 0) {
			throw new IllegalArgumentException("weight: " + weight + " (expected: >= 0)");
		}
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

}
