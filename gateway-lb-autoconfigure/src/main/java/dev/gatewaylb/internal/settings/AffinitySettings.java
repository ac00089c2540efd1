package dev.gatewaylb.internal.settings;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import org.jspecify.annotations.Nullable;

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
			new SplitSettings.StickyCookie("", Duration.ZERO, "/", false, true, "Lax"), "", List.of(), null);

	private final SplitSettings.StickyCookie cookie;

	private final String secret;

	private final List<String> previousSecrets;

	private final @Nullable String learn;

	/**
	 * Creates the settings.
	 * @param cookie the cookie's name and attributes; an empty name turns affinity off
	 * @param secret the secret that signs, at least
	 * {@value EndpointCookie#MIN_SECRET_BYTES} bytes in UTF-8 when the name is set
	 * @param previousSecrets secrets still accepted, newest first
	 * @param learn the application cookie whose session the affinity follows, or
	 * {@code null}
	 */
	AffinitySettings(SplitSettings.StickyCookie cookie, String secret, List<String> previousSecrets,
			@Nullable String learn) {
		this.cookie = Objects.requireNonNull(cookie, "cookie");
		this.secret = Objects.requireNonNull(secret, "secret");
		this.previousSecrets = List.copyOf(previousSecrets);
		this.learn = learn;
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
	public SplitSettings.StickyCookie cookie() {
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

	String secret() {
		return this.secret;
	}

	List<String> previousSecrets() {
		return this.previousSecrets;
	}

	/**
	 * Returns a new signer of a service's cookie values: made once per runtime, for the
	 * service's own id, since the settings under {@code defaults} serve many services.
	 * @param service the service's id: a value signed for one service is refused by
	 * another
	 * @return the signer
	 * @throws IllegalStateException when affinity is off
	 */
	public EndpointCookie signerFor(String service) {
		if (!enabled()) {
			throw new IllegalStateException("endpoint affinity is off");
		}
		return new EndpointCookie(service, this.secret.getBytes(StandardCharsets.UTF_8),
				this.previousSecrets.stream().map((previous) -> previous.getBytes(StandardCharsets.UTF_8)).toList());
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof AffinitySettings that && this.cookie.equals(that.cookie)
				&& this.secret.equals(that.secret) && this.previousSecrets.equals(that.previousSecrets)
				&& Objects.equals(this.learn, that.learn);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.cookie, this.secret, this.previousSecrets, this.learn);
	}

	@Override
	public String toString() {
		return "AffinitySettings[cookie=" + this.cookie + ", secret=" + (this.secret.isEmpty() ? "(none)" : "(set)")
				+ ", previousSecrets=" + this.previousSecrets.size() + ", learn=" + this.learn + "]";
	}

}
