package dev.gatewaylb.internal.request;

import dev.gatewaylb.request.Cidr;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Finds the client's address behind trusted proxies.
 * <p>
 * Starting from the connection's peer, while the current hop is a trusted proxy, the next
 * address to the left in {@code X-Forwarded-For} becomes the current hop; the first hop
 * that is not trusted is the client. A peer outside {@code trusted-proxies} is the client
 * whatever the header says, so a client cannot choose its own hash key by sending the
 * header. This is nginx's {@code real_ip_recursive on}.
 * <p>
 * An entry is an IP literal ({@code 192.0.2.1}, {@code 2001:db8::1},
 * {@code [2001:db8::1]}) or one with a port ({@code 192.0.2.1:5678},
 * {@code [2001:db8::1]:443}); an unbracketed entry with two or more colons is a bare IPv6
 * address, never a host and port. Blanks around entries are ignored and empty entries
 * ({@code a,,b}) skipped, as nginx does. An entry that is anything else (a host name,
 * {@code unknown}, garbage) ends the walk at the last trusted hop.
 * <p>
 * The header is walked backwards by index, without splitting it, and addresses are parsed
 * by {@link Cidr#parseAddress(CharSequence, int, int)}: no DNS query, no exception, and a
 * time linear in the header's length, whatever a client sends.
 */
public final class ClientAddresses {

	private ClientAddresses() {
	}

	/**
	 * Returns the client's IP address as text.
	 * @param peer the connection's peer, or {@code null}
	 * @param forwardedFor the values of every {@code X-Forwarded-For} header, or
	 * {@code null}
	 * @param trustedProxies the networks whose header is believed
	 * @return the address, or {@code null} when the peer is unknown
	 */
	public static @Nullable String resolve(@Nullable InetSocketAddress peer,
			@Nullable List<? extends @Nullable CharSequence> forwardedFor, List<Cidr> trustedProxies) {
		InetAddress client = resolveAddress(peer, forwardedFor, trustedProxies);
		return (client != null) ? client.getHostAddress() : null;
	}

	/**
	 * Returns the client's IP address, as {@link #resolve} finds it.
	 * @param peer the connection's peer, or {@code null}
	 * @param forwardedFor the values of every {@code X-Forwarded-For} header, or
	 * {@code null}
	 * @param trustedProxies the networks whose header is believed
	 * @return the address, or {@code null} when the peer is unknown
	 */
	public static @Nullable InetAddress resolveAddress(@Nullable InetSocketAddress peer,
			@Nullable List<? extends @Nullable CharSequence> forwardedFor, List<Cidr> trustedProxies) {
		InetAddress hop = (peer != null) ? peer.getAddress() : null;
		if (hop == null) {
			return null;
		}
		if (trustedProxies.isEmpty() || forwardedFor == null || forwardedFor.isEmpty()) {
			return hop;
		}
		for (int line = forwardedFor.size() - 1; line >= 0; line--) {
			CharSequence value = forwardedFor.get(line);
			if (value == null) {
				continue;
			}
			int end = value.length();
			while (end >= 0) {
				int comma = end - 1;
				while (comma >= 0 && value.charAt(comma) != ',') {
					comma--;
				}
				int entryStart = skipBlanks(value, comma + 1, end);
				int entryEnd = trimBlanks(value, entryStart, end);
				if (entryStart < entryEnd) {
					if (!Cidr.anyContains(trustedProxies, hop)) {
						return hop;
					}
					InetAddress next = entry(value, entryStart, entryEnd);
					if (next == null) {
						return hop;
					}
					hop = next;
				}
				end = comma;
			}
		}
		return hop;
	}

	/**
	 * Reads one trimmed, non-empty entry: an address with or without a port.
	 */
	private static @Nullable InetAddress entry(CharSequence value, int start, int end) {
		if (value.charAt(start) == '[') {
			int close = indexOf(value, ']', start + 1, end);
			if (close < 0) {
				return null;
			}
			if (close + 1 == end || (value.charAt(close + 1) == ':' && isPort(value, close + 2, end))) {
				return Cidr.parseAddress(value, start, close + 1);
			}
			return null;
		}
		int colon = indexOf(value, ':', start, end);
		if (colon < 0 || indexOf(value, ':', colon + 1, end) >= 0) {
			return Cidr.parseAddress(value, start, end);
		}
		// One colon: an IPv4 address and a port (an IPv6 address has at least two).
		return isPort(value, colon + 1, end) ? Cidr.parseAddress(value, start, colon) : null;
	}

	private static boolean isPort(CharSequence value, int start, int end) {
		if (start >= end || end - start > 5) {
			return false;
		}
		int port = 0;
		for (int i = start; i < end; i++) {
			char c = value.charAt(i);
			if (c < '0' || c > '9') {
				return false;
			}
			port = port * 10 + (c - '0');
		}
		return port <= 65535;
	}

	private static int indexOf(CharSequence value, char c, int start, int end) {
		for (int i = start; i < end; i++) {
			if (value.charAt(i) == c) {
				return i;
			}
		}
		return -1;
	}

	private static int skipBlanks(CharSequence value, int start, int end) {
		while (start < end && isBlank(value.charAt(start))) {
			start++;
		}
		return start;
	}

	private static int trimBlanks(CharSequence value, int start, int end) {
		while (end > start && isBlank(value.charAt(end - 1))) {
			end--;
		}
		return end;
	}

	private static boolean isBlank(char c) {
		// Spaces and tabs, and control characters, which Cidr trims the same way.
		return c <= ' ';
	}

}
