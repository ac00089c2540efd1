package dev.gatewaylb.config;

import java.time.Duration;
import java.util.Objects;

import dev.gatewaylb.internal.request.Tokens;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The sticky cookie of a split.
 *
 * @param cookie Name of the sticky cookie.
 * @param maxAge Lifetime of the cookie. 0 makes it a session cookie, dropped when the
 * browser closes.
 * @param path Path attribute of the cookie.
 * @param secure Whether the cookie is sent over HTTPS only.
 * @param httpOnly Whether the cookie is hidden from scripts.
 * @param sameSite SameSite attribute of the cookie: Strict, Lax or None. None requires
 * secure, since browsers drop a SameSite=None cookie without Secure.
 */
public record StickyProperties(String cookie, @DefaultValue("0s") Duration maxAge, @DefaultValue("/") String path,
		@DefaultValue("false") boolean secure, @DefaultValue("true") boolean httpOnly,
		@DefaultValue("Lax") SameSite sameSite) {

	public StickyProperties {
		Objects.requireNonNull(cookie, "cookie");
		if (!Tokens.isToken(cookie)) {
			throw new IllegalArgumentException(
					"cookie: '" + cookie + "' (expected: a cookie name, letters, digits and !#$%&'*+-.^_`|~ only)");
		}
		Bounds.checkDuration("max-age", maxAge, Bounds.MAX_COOKIE_AGE);
		if (path.isEmpty() || path.charAt(0) != '/' || path.chars().anyMatch((c) -> c < 0x21 || c == ';' || c > 0x7e)) {
			throw new IllegalArgumentException("path: '" + path + "' (expected: a path starting with /)");
		}
		if (sameSite == SameSite.NONE && !secure) {
			// Browsers drop a SameSite=None cookie that is not Secure, so the gateway
			// would mint a new value, and make a new choice, on every request.
			throw new IllegalArgumentException(
					"same-site: None with secure: false (expected: secure: true, browsers drop a SameSite=None cookie without Secure)");
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
		 * Sent with every request, cross-site ones included; only with {@code secure},
		 * which browsers require with it and binding enforces.
		 */
		NONE

	}

}
