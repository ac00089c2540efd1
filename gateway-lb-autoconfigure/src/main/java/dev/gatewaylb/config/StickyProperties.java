package dev.gatewaylb.config;

import java.time.Duration;
import java.util.Objects;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The affinity cookie of a split.
 *
 * @param cookie Name of the affinity cookie.
 * @param maxAge Lifetime of the cookie. 0 makes it a session cookie, dropped when the
 * browser closes.
 * @param path Path attribute of the cookie.
 * @param secure Whether the cookie is sent over HTTPS only.
 * @param httpOnly Whether the cookie is hidden from scripts.
 * @param sameSite SameSite attribute of the cookie: Strict, Lax or None.
 */
public record StickyProperties(String cookie, @DefaultValue("0s") Duration maxAge, @DefaultValue("/") String path,
		@DefaultValue("false") boolean secure, @DefaultValue("true") boolean httpOnly,
		@DefaultValue("Lax") SameSite sameSite) {

	public StickyProperties {
		Objects.requireNonNull(cookie, "cookie");
		if (!ServiceProperties.TOKEN.matcher(cookie).matches()) {
			throw new IllegalArgumentException(
					"cookie: '" + cookie + "' (expected: a cookie name, letters, digits and !#$%&'*+-.^_`|~ only)");
		}
		if (maxAge.isNegative()) {
			throw new IllegalArgumentException("max-age: " + Durations.format(maxAge) + " (expected: >= 0s)");
		}
		if (path.isEmpty() || path.charAt(0) != '/' || path.chars().anyMatch((c) -> c < 0x21 || c == ';' || c > 0x7e)) {
			throw new IllegalArgumentException("path: '" + path + "' (expected: a path starting with /)");
		}
	}

	/**
	 * The values of the SameSite attribute.
	 */
	public enum SameSite {

		/**
		 * Sent with same-site requests only.
		 */
		STRICT,

		/**
		 * Also sent with top-level navigations from other sites.
		 */
		LAX,

		/**
		 * Sent with every request; browsers require {@code secure} with it.
		 */
		NONE

	}

}
