package dev.gatewaylb.config;

import java.time.Duration;
import java.util.List;

import dev.gatewaylb.internal.request.Tokens;
import org.jspecify.annotations.Nullable;

/**
 * Sticky sessions to an endpoint: a signed cookie that names the endpoint a session stays
 * on; a key that is not set is {@code null}.
 *
 * @param cookie Name of the affinity cookie. Empty turns endpoint affinity off.
 * @param secret Secret that signs the cookie (HMAC-SHA256), at least 32 bytes, the same
 * on every replica of the gateway. Required when cookie is set.
 * @param previousSecrets Secrets whose cookies are still followed, newest first, while a
 * new secret is rolled out; cookies issued from then on are signed with secret.
 * @param learn Name of an application cookie, such as JSESSIONID, whose session the
 * affinity follows: the affinity cookie is set only when the upstream's answer sets that
 * cookie, and removed when the upstream expires it. Empty sets the affinity cookie on the
 * first answer of every session.
 * @param maxAge Lifetime of the affinity cookie. 0 makes it a session cookie, dropped
 * when the browser closes. A value also carries its issue time, signed: past max-age (a
 * day for a session cookie) it is no longer followed, and a session past half of it gets
 * a fresh value.
 * @param path Path attribute of the cookie.
 * @param secure Whether the cookie is sent over HTTPS only. A request that came over
 * HTTPS gets a Secure cookie either way.
 * @param httpOnly Whether the cookie is hidden from scripts.
 * @param sameSite SameSite attribute of the cookie: Strict, Lax or None. None requires
 * secure, since browsers drop a SameSite=None cookie without Secure.
 * @param maxLoadFactor Most requests in flight, as a factor of the service's average per
 * endpoint (weighted, the request included), that a followed endpoint may hold: past it
 * the session moves. Above 1; 0 turns the bound off.
 */
public record AffinityProperties(@Nullable String cookie, @Nullable String secret,
		@Nullable List<String> previousSecrets, @Nullable String learn, @Nullable Duration maxAge,
		@Nullable String path, @Nullable Boolean secure, @Nullable Boolean httpOnly,
		StickyProperties.@Nullable SameSite sameSite, @Nullable Double maxLoadFactor) {

	public AffinityProperties {
		if (cookie != null && !cookie.isEmpty() && !Tokens.isToken(cookie)) {
			throw new IllegalArgumentException(
					"cookie: '" + cookie + "' (expected: a cookie name, letters, digits and !#$%&'*+-.^_`|~ only)");
		}
		if (learn != null && !learn.isEmpty() && !Tokens.isToken(learn)) {
			throw new IllegalArgumentException(
					"learn: '" + learn + "' (expected: a cookie name, letters, digits and !#$%&'*+-.^_`|~ only)");
		}
		Bounds.checkDuration("max-age", maxAge, Bounds.MAX_COOKIE_AGE);
		if (path != null && (path.isEmpty() || path.charAt(0) != '/'
				|| path.chars().anyMatch((c) -> c < 0x21 || c == ';' || c > 0x7e))) {
			throw new IllegalArgumentException("path: '" + path + "' (expected: a path starting with /)");
		}
		if (previousSecrets != null) {
			previousSecrets = List.copyOf(previousSecrets);
		}
		// NaN fails both comparisons.
		if (maxLoadFactor != null && !(maxLoadFactor == 0 || (maxLoadFactor > 1 && maxLoadFactor <= 100))) {
			throw new IllegalArgumentException(
					"max-load-factor: " + maxLoadFactor + " (expected: 0 (off) or above 1 to 100, e.g. 2.0)");
		}
	}

	@Override
	public String toString() {
		// The secrets never leave in a message or a log line.
		return "AffinityProperties[cookie=" + this.cookie + ", secret=" + ((this.secret != null) ? "(set)" : "null")
				+ ", previousSecrets="
				+ ((this.previousSecrets != null) ? this.previousSecrets.size() + " set" : "null") + ", learn="
				+ this.learn + ", maxAge=" + this.maxAge + ", path=" + this.path + ", secure=" + this.secure
				+ ", httpOnly=" + this.httpOnly + ", sameSite=" + this.sameSite + ", maxLoadFactor="
				+ this.maxLoadFactor + "]";
	}

}
