package dev.gatewaylb.gateway.settings;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import dev.gatewaylb.config.Cidr;
import dev.gatewaylb.split.Rollout;
import dev.gatewaylb.split.Split;
import org.jspecify.annotations.Nullable;

import org.springframework.http.ResponseCookie;

/**
 * The runtime form of one {@code gateway.lb.splits.<name>} entry.
 *
 * @param split the compiled weighted choice
 * @param sticky the affinity cookie, or {@code null} for a fresh choice per request
 * @param overrideHeader the header testers use to force a target, or {@code null}
 * @param overrideTrustedClients the networks whose override is honoured, empty for
 * nobody's
 */
public record SplitSettings(Split split, @Nullable StickyCookie sticky, @Nullable String overrideHeader,
		List<Cidr> overrideTrustedClients, Rollout.@Nullable Plan rollout) {

	public SplitSettings {
		Objects.requireNonNull(split, "split");
		overrideTrustedClients = List.copyOf(overrideTrustedClients);
	}

	/**
	 * Returns whether a client at {@code address} may choose the target with the override
	 * header.
	 * @param address the client's address as resolved through the trusted proxies
	 * @return whether one of {@link #overrideTrustedClients()} contains it
	 */
	public boolean trustsOverrideFrom(InetAddress address) {
		return Cidr.anyContains(this.overrideTrustedClients, address);
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
		 * @param secure whether to mark it {@code Secure} even if {@link #secure()} is
		 * off: the request came over HTTPS
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

		static String sameSite(Enum<?> value) {
			String lower = value.name().toLowerCase(Locale.ROOT);
			return Character.toUpperCase(lower.charAt(0)) + lower.substring(1);
		}

	}

}
