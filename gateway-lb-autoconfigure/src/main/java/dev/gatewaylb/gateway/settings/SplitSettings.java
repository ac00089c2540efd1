package dev.gatewaylb.gateway.settings;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

import dev.gatewaylb.split.Split;
import org.jspecify.annotations.Nullable;

import org.springframework.http.ResponseCookie;

/**
 * The runtime form of one {@code gateway.lb.splits.<name>} entry.
 *
 * @param split the compiled weighted choice
 * @param sticky the affinity cookie, or {@code null} for a fresh choice per request
 * @param overrideHeader the header testers use to force a target, or {@code null}
 */
public record SplitSettings(Split split, @Nullable StickyCookie sticky, @Nullable String overrideHeader) {

	public SplitSettings {
		Objects.requireNonNull(split, "split");
	}

	/**
	 * The attributes of a split's affinity cookie.
	 *
	 * @param name the cookie name
	 * @param maxAge its lifetime, zero for a session cookie
	 * @param path its path
	 * @param secure whether it is sent over HTTPS only
	 * @param httpOnly whether scripts cannot read it
	 * @param sameSite {@code Strict}, {@code Lax} or {@code None}
	 */
	public record StickyCookie(String name, Duration maxAge, String path, boolean secure, boolean httpOnly,
			String sameSite) {

		/**
		 * Returns the {@code Set-Cookie} of a freshly minted value.
		 * @param value the value
		 * @return the cookie
		 */
		public ResponseCookie toResponseCookie(String value) {
			ResponseCookie.ResponseCookieBuilder cookie = ResponseCookie.from(this.name, value)
				.path(this.path)
				.secure(this.secure)
				.httpOnly(this.httpOnly)
				.sameSite(this.sameSite);
			if (!this.maxAge.isZero()) {
				cookie.maxAge(this.maxAge);
			}
			return cookie.build();
		}

		static String sameSite(Enum<?> value) {
			String lower = value.name().toLowerCase(Locale.ROOT);
			return Character.toUpperCase(lower.charAt(0)) + lower.substring(1);
		}

	}

}
