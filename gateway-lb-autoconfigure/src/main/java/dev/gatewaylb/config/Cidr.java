package dev.gatewaylb.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * An IPv4 or IPv6 network such as {@code 10.0.0.0/8} or {@code fd00::/8}; a bare address
 * is a network of one.
 *
 * @param network the network's address bytes, masked
 * @param prefixLength the number of leading bits that must match
 */
public record Cidr(byte[] network, int prefixLength) {

	private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

	private static final Pattern IPV6 = Pattern.compile("\\[?[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*]?");

	public Cidr {
		network = network.clone();
		if (prefixLength < 0 || prefixLength > network.length * 8) {
			throw new IllegalArgumentException(
					"prefix length: " + prefixLength + " (expected: 0 to " + network.length * 8 + ")");
		}
		mask(network, prefixLength);
	}

	/**
	 * Parses {@code address/prefix} or a bare address. Used by configuration binding.
	 * @param text the network
	 * @return the network
	 * @throws IllegalArgumentException if {@code text} is not an IP literal with an
	 * optional prefix length
	 */
	public static Cidr valueOf(String text) {
		String trimmed = text.trim();
		int slash = trimmed.indexOf('/');
		InetAddress address = parseAddress((slash < 0) ? trimmed : trimmed.substring(0, slash));
		if (address == null) {
			throw new IllegalArgumentException(
					"trusted-proxies: '" + text + "' (expected: an IP address or a CIDR such as 10.0.0.0/8)");
		}
		byte[] bytes = address.getAddress();
		int prefix = bytes.length * 8;
		if (slash >= 0) {
			try {
				prefix = Integer.parseInt(trimmed.substring(slash + 1));
			}
			catch (NumberFormatException ex) {
				prefix = -1;
			}
			if (prefix < 0 || prefix > bytes.length * 8) {
				throw new IllegalArgumentException(
						"trusted-proxies: '" + text + "' (expected: a prefix length of 0 to " + bytes.length * 8 + ")");
			}
		}
		return new Cidr(bytes, prefix);
	}

	/**
	 * Parses an IP literal without ever asking DNS.
	 * @param text an IPv4 literal or an IPv6 literal, with or without brackets
	 * @return the address, or {@code null} if {@code text} is not an IP literal
	 */
	public static @Nullable InetAddress parseAddress(String text) {
		String candidate = text.trim();
		if (!IPV4.matcher(candidate).matches() && !IPV6.matcher(candidate).matches()) {
			return null;
		}
		try {
			// Only literals reach this point, which InetAddress parses without a lookup.
			return InetAddress.getByName(candidate);
		}
		catch (UnknownHostException | IllegalArgumentException ex) {
			return null;
		}
	}

	/**
	 * Returns whether {@code address} is in this network. An IPv4 address never matches
	 * an IPv6 network nor the reverse, except IPv4-mapped IPv6 addresses, which Java
	 * already presents as IPv4.
	 * @param address the address
	 * @return whether it matches
	 */
	public boolean contains(InetAddress address) {
		byte[] bytes = address.getAddress();
		if (bytes.length != this.network.length) {
			return false;
		}
		mask(bytes, this.prefixLength);
		return Arrays.equals(bytes, this.network);
	}

	@Override
	public byte[] network() {
		return this.network.clone();
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof Cidr that && this.prefixLength == that.prefixLength
				&& Arrays.equals(this.network, that.network);
	}

	@Override
	public int hashCode() {
		return 31 * Arrays.hashCode(this.network) + this.prefixLength;
	}

	@Override
	public String toString() {
		try {
			return InetAddress.getByAddress(this.network).getHostAddress() + "/" + this.prefixLength;
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void mask(byte[] bytes, int prefixLength) {
		for (int i = 0; i < bytes.length; i++) {
			int keep = Math.max(0, Math.min(8, prefixLength - i * 8));
			bytes[i] &= (byte) (0xff00 >> keep);
		}
	}

}
