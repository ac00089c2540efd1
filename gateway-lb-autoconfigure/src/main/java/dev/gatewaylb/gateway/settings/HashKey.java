package dev.gatewaylb.gateway.settings;

import java.util.Objects;

/**
 * Where a consistent-hash key comes from.
 *
 * @param source the kind of source
 * @param name the header or cookie name; empty for the client address
 */
public record HashKey(Source source, String name) {

	/**
	 * The client address.
	 */
	public static final HashKey CLIENT_IP = new HashKey(Source.CLIENT_IP, "");

	public HashKey {
		Objects.requireNonNull(source, "source");
		Objects.requireNonNull(name, "name");
	}

	/**
	 * Parses {@code client-ip}, {@code header:NAME} or {@code cookie:NAME}, a value
	 * configuration binding has already validated.
	 * @param text the value of {@code hash-key}
	 * @return the key source
	 */
	public static HashKey parse(String text) {
		if (text.startsWith("header:")) {
			return new HashKey(Source.HEADER, text.substring("header:".length()));
		}
		if (text.startsWith("cookie:")) {
			return new HashKey(Source.COOKIE, text.substring("cookie:".length()));
		}
		if (text.equals("client-ip")) {
			return CLIENT_IP;
		}
		throw new IllegalArgumentException(
				"hash-key: '" + text + "' (expected: client-ip, header:NAME or cookie:NAME)");
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
