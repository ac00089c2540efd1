package dev.gatewaylb.internal.request;

import java.util.Objects;

/**
 * Where a per-request key comes from, as configuration spells it: {@code client-ip},
 * {@code header:NAME} or {@code cookie:NAME}. The one parser of that spelling, for
 * {@code hash-key} and for any other setting that names a part of the request the same
 * way; {@link #toString()} gives the spelling back.
 *
 * @param source the kind of source
 * @param name the header or cookie name, an RFC 9110 token; empty for the client address
 */
public record HashKey(Source source, String name) {

	/**
	 * The client address.
	 */
	public static final HashKey CLIENT_IP = new HashKey(Source.CLIENT_IP, "");

	private static final String CLIENT_IP_TEXT = "client-ip";

	private static final String HEADER_PREFIX = "header:";

	private static final String COOKIE_PREFIX = "cookie:";

	public HashKey {
		Objects.requireNonNull(source, "source");
		Objects.requireNonNull(name, "name");
		if ((source == Source.CLIENT_IP) ? !name.isEmpty() : !Tokens.isToken(name)) {
			throw new IllegalArgumentException("name: '" + name + "' (expected: "
					+ ((source == Source.CLIENT_IP) ? "none" : "a header or cookie name") + ")");
		}
	}

	/**
	 * Parses {@code client-ip}, {@code header:NAME} or {@code cookie:NAME}, where
	 * {@code NAME} is an RFC 9110 token; case-sensitive.
	 * @param property the property's name relative to its group, such as
	 * {@code hash-key}, for the message
	 * @param text the value
	 * @return the key source
	 * @throws IllegalArgumentException naming the property and the value when the value
	 * is none of those
	 */
	public static HashKey parse(String property, String text) {
		if (text.equals(CLIENT_IP_TEXT)) {
			return CLIENT_IP;
		}
		Source source = text.startsWith(HEADER_PREFIX) ? Source.HEADER
				: text.startsWith(COOKIE_PREFIX) ? Source.COOKIE : null;
		// Both prefixes have the same length.
		String name = text.substring(Math.min(text.length(), HEADER_PREFIX.length()));
		if (source == null || !Tokens.isToken(name)) {
			throw new IllegalArgumentException(
					property + ": '" + text + "' (expected: client-ip, header:NAME or cookie:NAME)");
		}
		return new HashKey(source, name);
	}

	/**
	 * Returns the key source as configuration spells it, the text {@link #parse} reads.
	 * @return {@code client-ip}, {@code header:NAME} or {@code cookie:NAME}
	 */
	@Override
	public String toString() {
		return switch (this.source) {
			case CLIENT_IP -> CLIENT_IP_TEXT;
			case HEADER -> HEADER_PREFIX + this.name;
			case COOKIE -> COOKIE_PREFIX + this.name;
		};
	}

	/**
	 * The kinds of key source.
	 */
	public enum Source {

		/**
		 * The client's IP address.
		 */
		CLIENT_IP,

		/**
		 * The first value of a request header.
		 */
		HEADER,

		/**
		 * The first cookie of a name.
		 */
		COOKIE

	}

}
