package dev.gatewaylb.internal.config;

import java.time.Duration;
import java.util.Locale;

import org.springframework.http.ResponseCookie;

/**
 * The attributes of a cookie the gateway sets: a split's sticky cookie, or a service's
 * endpoint affinity cookie.
 *
 * @param name the cookie name
 * @param maxAge its lifetime, zero for a session cookie
 * @param path its path
 * @param secure whether it is sent over HTTPS only
 * @param httpOnly whether scripts cannot read it
 * @param sameSite {@code Strict}, {@code Lax} or {@code None}
 */
public record CookieSettings(String name, Duration maxAge, String path, boolean secure, boolean httpOnly,
		String sameSite) {

	/**
	 * Returns the {@code Set-Cookie} of a freshly minted value.
	 * @param value the value
	 * @param secure whether to mark it {@code Secure} even if {@link #secure()} is off:
	 * the request came over HTTPS
	 * @return the cookie
	 */
	public ResponseCookie toResponseCookie(String value, boolean secure) {
		ResponseCookie.ResponseCookieBuilder cookie = ResponseCookie.from(this.name, value)
			.path(this.path)
			.secure(this.secure || secure)
			.httpOnly(this.httpOnly)
			.sameSite(this.sameSite);
		if (!this.maxAge.isZero()) {
			cookie.maxAge(this.maxAge);
		}
		return cookie.build();
	}

	/**
	 * Returns the {@code Set-Cookie} that removes the cookie from the browser: an empty
	 * value that expires at once, with the same name and path.
	 * @return the cookie
	 */
	public ResponseCookie toExpiredCookie() {
		return ResponseCookie.from(this.name, "")
			.path(this.path)
			.secure(this.secure)
			.httpOnly(this.httpOnly)
			.sameSite(this.sameSite)
			.maxAge(0)
			.build();
	}

	/**
	 * Returns the {@code SameSite} attribute of a bound value: {@code Strict},
	 * {@code Lax} or {@code None}.
	 * @param value the bound value
	 * @return the attribute
	 */
	public static String sameSite(Enum<?> value) {
		String lower = value.name().toLowerCase(Locale.ROOT);
		return Character.toUpperCase(lower.charAt(0)) + lower.substring(1);
	}

}
