package dev.gatewaylb.internal.affinity;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

import dev.gatewaylb.internal.config.CookieSettings;
import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import org.jspecify.annotations.Nullable;
import dev.gatewaylb.config.AffinityProperties;
import dev.gatewaylb.config.StickyProperties.SameSite;
import dev.gatewaylb.internal.config.Layers;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * A service's sticky sessions to an endpoint ({@code affinity}): the cookie's name and
 * attributes (no name: off), its secrets, and the application cookie it learns from.
 * Equal when the configuration is equal, so that a refresh that changes nothing keeps the
 * runtime; its text never shows a secret.
 */
public final class AffinitySettings {

	/**
	 * No endpoint affinity, the other keys at their built-in defaults.
	 */
	public static final AffinitySettings NONE = new AffinitySettings(
			new CookieSettings("", Duration.ZERO, "/", false, true, "Lax"), "", List.of(), null, 2.0);

	/**
	 * How long a value of a session cookie ({@code max-age: 0}) is followed: a browser
	 * session rarely lasts longer, and a copied value stops working after it.
	 */
	public static final Duration SESSION_COOKIE_LIFETIME = Duration.ofDays(1);

	private final CookieSettings cookie;

	private final String secret;

	private final List<String> previousSecrets;

	private final @Nullable String learn;

	private final double maxLoadFactor;

	/**
	 * Creates the settings.
	 * @param cookie the cookie's name and attributes; an empty name turns affinity off
	 * @param secret the secret that signs, at least
	 * {@value EndpointCookie#MIN_SECRET_BYTES} bytes in UTF-8 when the name is set
	 * @param previousSecrets secrets still accepted, newest first
	 * @param learn the application cookie whose session the affinity follows, or
	 * {@code null}
	 * @param maxLoadFactor the most a followed endpoint may hold as a factor of the
	 * service's average in flight, 0 for no bound
	 */
	AffinitySettings(CookieSettings cookie, String secret, List<String> previousSecrets, @Nullable String learn,
			double maxLoadFactor) {
		this.cookie = Objects.requireNonNull(cookie, "cookie");
		this.secret = Objects.requireNonNull(secret, "secret");
		this.previousSecrets = List.copyOf(previousSecrets);
		this.learn = learn;
		this.maxLoadFactor = maxLoadFactor;
	}

	/**
	 * Returns the most requests in flight a followed endpoint may hold, as a factor of
	 * the service's weighted average (the request included).
	 * @return the factor, 0 for no bound
	 */
	public double maxLoadFactor() {
		return this.maxLoadFactor;
	}

	/**
	 * Returns how long a cookie value is followed after it was issued: {@code max-age},
	 * or {@link #SESSION_COOKIE_LIFETIME} for a session cookie.
	 * @return the lifetime
	 */
	public Duration lifetime() {
		Duration maxAge = this.cookie.maxAge();
		return (maxAge.isZero()) ? SESSION_COOKIE_LIFETIME : maxAge;
	}

	/**
	 * Returns whether the service has endpoint affinity.
	 * @return whether {@code affinity.cookie} is set
	 */
	public boolean enabled() {
		return !this.cookie.name().isEmpty();
	}

	/**
	 * Returns the cookie's name and attributes.
	 * @return the cookie, its name empty when affinity is off
	 */
	public CookieSettings cookie() {
		return this.cookie;
	}

	/**
	 * Returns the application cookie whose session the affinity follows.
	 * @return its name, or {@code null} to set the affinity cookie on a session's first
	 * answer
	 */
	public @Nullable String learn() {
		return this.learn;
	}

	/**
	 * Returns the secret that signs; never logged or shown.
	 * @return the secret, empty when affinity is off and none is set
	 */
	public String secret() {
		return this.secret;
	}

	/**
	 * Returns the secrets still accepted, newest first; never logged or shown.
	 * @return the secrets
	 */
	public List<String> previousSecrets() {
		return this.previousSecrets;
	}

	/**
	 * Returns a new signer of a service's cookie values: made once per runtime, for the
	 * service's own id, since the settings under {@code defaults} serve many services.
	 * @param service the service's id: a value signed for one service is refused by
	 * another
	 * @param wallMillis the wall clock: a value's issue time is read on other replicas
	 * @return the signer
	 * @throws IllegalStateException when affinity is off
	 */
	public EndpointCookie signerFor(String service, LongSupplier wallMillis) {
		if (!enabled()) {
			throw new IllegalStateException("endpoint affinity is off");
		}
		return new EndpointCookie(service, this.secret.getBytes(StandardCharsets.UTF_8),
				this.previousSecrets.stream().map((previous) -> previous.getBytes(StandardCharsets.UTF_8)).toList(),
				Math.max(1, lifetime().toSeconds()), () -> wallMillis.getAsLong() / 1000);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof AffinitySettings that && this.cookie.equals(that.cookie)
				&& this.secret.equals(that.secret) && this.previousSecrets.equals(that.previousSecrets)
				&& Objects.equals(this.learn, that.learn) && this.maxLoadFactor == that.maxLoadFactor;
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.cookie, this.secret, this.previousSecrets, this.learn, this.maxLoadFactor);
	}

	@Override
	public String toString() {
		return "AffinitySettings[cookie=" + this.cookie + ", secret=" + (this.secret.isEmpty() ? "(none)" : "(set)")
				+ ", previousSecrets=" + this.previousSecrets.size() + ", learn=" + this.learn + ", maxLoadFactor="
				+ this.maxLoadFactor + "]";
	}

	/**
	 * The built-in defaults of the {@code affinity} block: off.
	 */
	public static final AffinityProperties BUILT_IN = new AffinityProperties("", "", List.of(), "", Duration.ZERO, "/",
			false, true, SameSite.LAX, 2.0);

	/**
	 * Maps a service's {@code affinity} block, or rejects it naming the key: a
	 * {@code SameSite=None} cookie without {@code secure}, a secret shorter than
	 * {@value EndpointCookie#MIN_SECRET_BYTES} bytes, {@code learn} naming the cookie
	 * itself.
	 * @param affinity the block's layers
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the key and its value
	 */
	public static AffinitySettings map(Layers.Group<AffinityProperties> affinity) {
		String name = affinity.get(AffinityProperties::cookie);
		boolean secure = affinity.get(AffinityProperties::secure);
		SameSite sameSite = affinity.get(AffinityProperties::sameSite);
		if (sameSite == SameSite.NONE && !secure) {
			// Browsers drop a SameSite=None cookie that is not Secure: every request
			// would start a new session.
			throw new InvalidConfigurationPropertyValueException(
					affinity.pathOf(AffinityProperties::sameSite, "same-site"), "None",
					"expected: secure: true with it, browsers drop a SameSite=None cookie without Secure");
		}
		String secret = affinity.get(AffinityProperties::secret);
		List<String> previous = affinity.get(AffinityProperties::previousSecrets);
		String learn = affinity.get(AffinityProperties::learn);
		if (!name.isEmpty()) {
			int bytes = secret.getBytes(StandardCharsets.UTF_8).length;
			// A secret is never in a message: its length is.
			if (bytes < EndpointCookie.MIN_SECRET_BYTES) {
				// Named where it was set, or, when nowhere, where the cookie was.
				throw new InvalidConfigurationPropertyValueException(
						affinity.isSet(AffinityProperties::secret)
								? affinity.pathOf(AffinityProperties::secret, "secret")
								: affinity.pathOf(AffinityProperties::cookie, "secret"),
						(bytes == 0) ? "(not set)" : "(hidden, " + bytes + " bytes)",
						"expected: at least " + EndpointCookie.MIN_SECRET_BYTES
								+ " bytes, the same on every replica, when affinity.cookie is set");
			}
			for (int i = 0; i < previous.size(); i++) {
				String old = previous.get(i);
				if (old == null || old.getBytes(StandardCharsets.UTF_8).length < EndpointCookie.MIN_SECRET_BYTES) {
					throw new InvalidConfigurationPropertyValueException(
							affinity.pathOf(AffinityProperties::previousSecrets, "previous-secrets") + "[" + i + "]",
							"(hidden)", "expected: at least " + EndpointCookie.MIN_SECRET_BYTES + " bytes");
				}
			}
			if (learn.equals(name)) {
				throw new InvalidConfigurationPropertyValueException(
						affinity.pathOf(AffinityProperties::learn, "learn"), learn,
						"expected: the application's own session cookie, not affinity.cookie");
			}
		}
		CookieSettings cookie = new CookieSettings(name, affinity.get(AffinityProperties::maxAge),
				affinity.get(AffinityProperties::path), secure, affinity.get(AffinityProperties::httpOnly),
				CookieSettings.sameSite(sameSite));
		return new AffinitySettings(cookie, secret, previous, learn.isEmpty() ? null : learn,
				affinity.get(AffinityProperties::maxLoadFactor));
	}

}
