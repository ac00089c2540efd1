package dev.gatewaylb.internal.discovery;

import java.util.Locale;

import dev.gatewaylb.request.Cidr;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Why a discovered instance is not balanced: the {@code reason} tag of
 * {@code gateway.lb.discovery.rejected}. One bad instance is skipped; the rest of the
 * list is applied, so that a registry entry with a typo never freezes a service's
 * membership.
 */
public enum DiscoveryRejection {

	/**
	 * The instance names no host.
	 */
	NO_HOST,

	/**
	 * The host is neither an IP literal nor an RFC 1123 host name ({@code bad host},
	 * {@code evil.com/x#}), which would otherwise rewrite the request's URL.
	 */
	INVALID_HOST,

	/**
	 * The port is outside 1 to 65535.
	 */
	INVALID_PORT,

	/**
	 * Another instance of the list has the same address; one of them is kept, the same
	 * one at every poll ({@link Membership#of}).
	 */
	DUPLICATE;

	/**
	 * Returns the meter tag's value, e.g. {@code invalid-host}.
	 * @return the tag
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Checks an instance's host and port.
	 * @param instance the instance
	 * @return why it is rejected, or {@code null} when it may be balanced
	 */
	public static @Nullable DiscoveryRejection of(ServiceInstance instance) {
		String host = instance.getHost();
		if (host == null || host.isBlank()) {
			return NO_HOST;
		}
		if (!isHost(host)) {
			return INVALID_HOST;
		}
		int port = instance.getPort();
		if (port < 1 || port > 65535) {
			return INVALID_PORT;
		}
		return null;
	}

	/**
	 * Returns whether a host is an IPv4 literal, an IPv6 literal (bracketed or not) or an
	 * RFC 1123 host name (labels of letters, digits and hyphens, 1 to 63 characters, not
	 * starting or ending with a hyphen, at most 253 in all, an optional final dot).
	 * @param host the host
	 * @return whether valid
	 */
	static boolean isHost(String host) {
		if (host.startsWith("[") || host.indexOf(':') >= 0) {
			return isIpv6(host);
		}
		String name = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
		if (name.isEmpty() || name.length() > 253) {
			return false;
		}
		int start = 0;
		while (start <= name.length()) {
			int end = name.indexOf('.', start);
			if (end < 0) {
				end = name.length();
			}
			if (!isLabel(name, start, end)) {
				return false;
			}
			start = end + 1;
		}
		// An all-numeric name is an IPv4 literal, or nothing: 300.1.1.1 and 1.2.3 are
		// neither.
		return !allDigitsAndDots(name) || Cidr.parseAddress(name) != null;
	}

	/**
	 * Returns whether a host is an IPv6 literal, bracketed or not, as the request parsers
	 * read one ({@link Cidr#parseAddress}), with a zone ({@code %eth0}) allowed: a
	 * registry on the same host may name one.
	 */
	private static boolean isIpv6(String host) {
		String literal = (host.startsWith("[") && host.endsWith("]")) ? host.substring(1, host.length() - 1) : host;
		int zone = literal.indexOf('%');
		if (zone >= 0) {
			if (zone == literal.length() - 1) {
				return false;
			}
			literal = literal.substring(0, zone);
		}
		return literal.indexOf(':') >= 0 && Cidr.parseAddress(literal) != null;
	}

	private static boolean isLabel(String name, int start, int end) {
		int length = end - start;
		if (length < 1 || length > 63 || name.charAt(start) == '-' || name.charAt(end - 1) == '-') {
			return false;
		}
		for (int i = start; i < end; i++) {
			char c = name.charAt(i);
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) {
				return false;
			}
		}
		return true;
	}

	private static boolean allDigitsAndDots(String name) {
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (c != '.' && (c < '0' || c > '9')) {
				return false;
			}
		}
		return true;
	}

}
