package dev.gatewaylb.request;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * An IPv4 or IPv6 network such as {@code 10.0.0.0/8} or {@code fd00::/8}; a bare address
 * is a network of one.
 * <p>
 * Addresses are read by {@link #parseAddress(CharSequence, int, int)}, a numeric parser
 * that never asks a resolver: a host name is not an address, and {@code X-Forwarded-For}
 * text can never make the gateway send a DNS query.
 *
 * @param network the network's address bytes, masked
 * @param prefixLength the number of leading bits that must match
 */
public record Cidr(byte[] network, int prefixLength) {

	public Cidr {
		network = network.clone();
		if (prefixLength < 0 || prefixLength > network.length * 8) {
			throw new IllegalArgumentException(
					"prefix length: " + prefixLength + " (expected: 0 to " + network.length * 8 + ")");
		}
		mask(network, prefixLength);
	}

	/**
	 * Parses {@code address/prefix} or a bare address. Used by configuration binding,
	 * which names the property; the message names the value.
	 * @param text the network
	 * @return the network
	 * @throws IllegalArgumentException if {@code text} is not an IP literal with an
	 * optional prefix length of decimal digits
	 */
	public static Cidr valueOf(String text) {
		int slash = text.indexOf('/');
		InetAddress address = parseAddress(text, 0, (slash < 0) ? text.length() : slash);
		if (address == null) {
			throw new IllegalArgumentException("'" + text + "' (expected: an IP address or a CIDR such as 10.0.0.0/8)");
		}
		byte[] bytes = address.getAddress();
		int prefix = bytes.length * 8;
		if (slash >= 0) {
			int end = trimEnd(text, slash + 1, text.length());
			prefix = decimal(text, slash + 1, end, 3);
			if (prefix < 0 || prefix > bytes.length * 8) {
				throw new IllegalArgumentException(
						"'" + text + "' (expected: a prefix length of 0 to " + bytes.length * 8 + ")");
			}
		}
		return new Cidr(bytes, prefix);
	}

	/**
	 * Parses an IP literal; see {@link #parseAddress(CharSequence, int, int)}.
	 * @param text the literal
	 * @return the address, or {@code null} if {@code text} is not an IP literal
	 */
	public static @Nullable InetAddress parseAddress(String text) {
		return parseAddress(text, 0, text.length());
	}

	/**
	 * Parses the IP literal in {@code text[start, end)} without ever asking a resolver:
	 * the digits become the address bytes here, and
	 * {@link InetAddress#getByAddress(byte[])} only wraps them.
	 * <p>
	 * Total and linear: any text gives an address or {@code null}, never an exception
	 * (bounds outside {@code text} give {@code null} too), and each character is read a
	 * bounded number of times, through {@link CharSequence#charAt(int)} only.
	 * <p>
	 * Accepted, after trimming spaces and control characters at both ends:
	 * <ul>
	 * <li>IPv4 as four dotted decimal octets, 0 to 255. An octet with a leading zero
	 * ({@code 01.2.3.4}) is rejected: some parsers read it as octal ({@code inet_aton}
	 * makes {@code 010} eight), so the same text would be two addresses on two hops.
	 * Shorter forms ({@code 1.2.3}, {@code 16909060}) are rejected as well.</li>
	 * <li>IPv6 in the text forms of RFC 4291 section 2.2: eight groups of one to four hex
	 * digits, one {@code ::} standing for one or more zero groups, and an IPv4 tail in
	 * the last 32 bits ({@code ::ffff:192.0.2.1}), optionally in brackets
	 * ({@code [2001:db8::1]}). IPv4-mapped addresses come back as IPv4, as Java presents
	 * them.</li>
	 * </ul>
	 * Zone ids ({@code fe80::1%eth0}) are rejected: a zone names an interface of the host
	 * that wrote it, meaningless in a header from another host or in a network list.
	 * @param text the text
	 * @param start the first index of the literal
	 * @param end the index after the literal
	 * @return the address, or {@code null} if the range is not an IP literal
	 * @see <a href="https://www.rfc-editor.org/rfc/rfc4291#section-2.2">RFC 4291, section
	 * 2.2</a>
	 */
	public static @Nullable InetAddress parseAddress(CharSequence text, int start, int end) {
		if (start < 0 || end > text.length() || start > end) {
			return null;
		}
		start = trimStart(text, start, end);
		end = trimEnd(text, start, end);
		if (start == end) {
			return null;
		}
		byte[] bytes;
		if (text.charAt(start) == '[') {
			bytes = (end - start >= 2 && text.charAt(end - 1) == ']') ? ipv6(text, start + 1, end - 1) : null;
		}
		else {
			// IPv4 gives up within 16 characters, so trying it first stays linear.
			bytes = new byte[4];
			if (!ipv4(text, start, end, bytes, 0)) {
				bytes = ipv6(text, start, end);
			}
		}
		if (bytes == null) {
			return null;
		}
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			// Only thrown for a length other than 4 or 16.
			return null;
		}
	}

	/**
	 * Reads four dotted decimal octets filling {@code text[start, end)} into
	 * {@code bytes[offset, offset + 4)}.
	 */
	private static boolean ipv4(CharSequence text, int start, int end, byte[] bytes, int offset) {
		int i = start;
		for (int octet = 0; octet < 4; octet++) {
			if (octet > 0) {
				if (i >= end || text.charAt(i) != '.') {
					return false;
				}
				i++;
			}
			int digitsStart = i;
			int value = 0;
			while (i < end) {
				char c = text.charAt(i);
				if (!isDigit(c)) {
					break;
				}
				if (i - digitsStart == 3 || (i - digitsStart == 1 && value == 0)) {
					// A fourth digit, or a digit after a leading zero.
					return false;
				}
				value = value * 10 + (c - '0');
				i++;
			}
			if (i == digitsStart || value > 255) {
				return false;
			}
			bytes[offset + octet] = (byte) value;
		}
		return i == end;
	}

	/**
	 * Reads an IPv6 literal without brackets, or returns {@code null}.
	 */
	private static byte @Nullable [] ipv6(CharSequence text, int start, int end) {
		byte[] bytes = new byte[16];
		int groups = 0;
		// The group index where "::" stands, -1 without one.
		int gap = -1;
		int i = start;
		if (end - start >= 2 && text.charAt(start) == ':' && text.charAt(start + 1) == ':') {
			gap = 0;
			i += 2;
		}
		while (i < end) {
			int groupStart = i;
			int value = 0;
			while (i < end) {
				int digit = hex(text.charAt(i));
				if (digit < 0) {
					break;
				}
				if (i - groupStart == 4) {
					return null;
				}
				value = (value << 4) | digit;
				i++;
			}
			if (i < end && text.charAt(i) == '.') {
				// An IPv4 tail ends the literal and fills the last two groups.
				if (groups > 6 || !ipv4(text, groupStart, end, bytes, groups * 2)) {
					return null;
				}
				groups += 2;
				break;
			}
			if (i == groupStart || groups == 8) {
				return null;
			}
			bytes[groups * 2] = (byte) (value >> 8);
			bytes[groups * 2 + 1] = (byte) value;
			groups++;
			if (i == end) {
				break;
			}
			if (text.charAt(i) != ':' || ++i == end) {
				return null;
			}
			if (text.charAt(i) == ':') {
				if (gap >= 0) {
					return null;
				}
				gap = groups;
				i++;
			}
		}
		if (gap < 0) {
			return (groups == 8) ? bytes : null;
		}
		if (groups == 8) {
			// "::" stands for at least one group.
			return null;
		}
		int tail = (groups - gap) * 2;
		System.arraycopy(bytes, gap * 2, bytes, 16 - tail, tail);
		Arrays.fill(bytes, gap * 2, 16 - tail, (byte) 0);
		return bytes;
	}

	/**
	 * Returns the value of the decimal digits {@code text[start, end)}, or -1 when the
	 * range is empty, longer than {@code maxDigits} or not all digits.
	 */
	private static int decimal(CharSequence text, int start, int end, int maxDigits) {
		if (start >= end || end - start > maxDigits) {
			return -1;
		}
		int value = 0;
		for (int i = start; i < end; i++) {
			char c = text.charAt(i);
			if (!isDigit(c)) {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return value;
	}

	private static boolean isDigit(char c) {
		// Not Character.isDigit, which also takes Arabic-Indic and other digits.
		return c >= '0' && c <= '9';
	}

	private static int hex(char c) {
		if (c >= '0' && c <= '9') {
			return c - '0';
		}
		if (c >= 'a' && c <= 'f') {
			return c - 'a' + 10;
		}
		if (c >= 'A' && c <= 'F') {
			return c - 'A' + 10;
		}
		return -1;
	}

	private static int trimStart(CharSequence text, int start, int end) {
		while (start < end && text.charAt(start) <= ' ') {
			start++;
		}
		return start;
	}

	private static int trimEnd(CharSequence text, int start, int end) {
		while (end > start && text.charAt(end - 1) <= ' ') {
			end--;
		}
		return end;
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

	/**
	 * Returns whether any of {@code networks} contains {@code address}.
	 * @param networks the networks
	 * @param address the address
	 * @return whether one matches
	 */
	public static boolean anyContains(List<Cidr> networks, InetAddress address) {
		for (Cidr network : networks) {
			if (network.contains(address)) {
				return true;
			}
		}
		return false;
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
