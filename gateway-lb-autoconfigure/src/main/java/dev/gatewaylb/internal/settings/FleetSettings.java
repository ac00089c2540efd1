package dev.gatewaylb.internal.settings;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.gatewaylb.config.FleetProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * The fleet channel's settings, {@code gateway.lb.fleet} checked: a printable name
 * without spaces, or none (the application's name then), and a secret long enough to sign
 * with.
 *
 * @param name the fleet's name, or {@code null} for the application's
 * @param secret the signing secret, or {@code null} not to sign
 * @param followDrains whether the fleet's drains are followed
 * @param followRollouts whether the fleet's rollout decisions are followed, and asked for
 * on start
 * @param previousSecrets secrets whose signatures are still accepted during a rotation
 */
public record FleetSettings(@Nullable String name, @Nullable String secret, boolean followDrains,
		boolean followRollouts, List<String> previousSecrets) {

	/**
	 * The fewest bytes of a secret: HMAC-SHA256's own output.
	 */
	public static final int MIN_SECRET_BYTES = 32;

	/**
	 * The longest name: an event's fields are at most this long.
	 */
	static final int MAX_NAME_LENGTH = 256;

	public FleetSettings {
		previousSecrets = List.copyOf(previousSecrets);
	}

	static FleetSettings map(FleetProperties fleet) {
		String name = fleet.name();
		if (name != null && (name.isEmpty() || name.length() > MAX_NAME_LENGTH
				|| !name.chars().allMatch((c) -> c > 0x20 && c < 0x7f))) {
			throw new InvalidConfigurationPropertyValueException("gateway.lb.fleet.name", name,
					"expected: 1 to " + MAX_NAME_LENGTH + " printable ASCII characters without spaces");
		}
		String secret = fleet.secret();
		if (secret != null && secret.getBytes(StandardCharsets.UTF_8).length < MIN_SECRET_BYTES) {
			// The value is a secret: never in a message.
			throw new InvalidConfigurationPropertyValueException("gateway.lb.fleet.secret", "(hidden)",
					"expected: at least " + MIN_SECRET_BYTES + " bytes, the same on every replica");
		}
		List<String> previous = fleet.previousSecrets();
		for (int i = 0; i < previous.size(); i++) {
			String old = previous.get(i);
			if (old == null || old.getBytes(StandardCharsets.UTF_8).length < MIN_SECRET_BYTES) {
				throw new InvalidConfigurationPropertyValueException("gateway.lb.fleet.previous-secrets[" + i + "]",
						"(hidden)", "expected: at least " + MIN_SECRET_BYTES + " bytes, as a secret");
			}
		}
		if (!previous.isEmpty() && secret == null) {
			throw new InvalidConfigurationPropertyValueException("gateway.lb.fleet.previous-secrets", "(hidden)",
					"expected: with gateway.lb.fleet.secret, the one events are signed with");
		}
		return new FleetSettings(name, secret, fleet.followDrains(), fleet.followRollouts(), previous);
	}

	/**
	 * Returns the fleet's name.
	 * @param application the application's name, {@code spring.application.name}
	 * @return the name set, else the application's
	 */
	public String name(String application) {
		return (this.name != null) ? this.name : application;
	}

	@Override
	public String toString() {
		return "FleetSettings[name=" + this.name + ", secret=" + ((this.secret != null) ? "(set)" : "null")
				+ ", followDrains=" + this.followDrains + ", followRollouts=" + this.followRollouts
				+ ", previousSecrets=(" + this.previousSecrets.size() + " set)]";
	}

	/**
	 * Returns the keys of this block that a replica reads at start-up only, and which
	 * differ in {@code next}: the channel is built once, with its name and what it
	 * follows.
	 * @param next the settings of a refresh
	 * @return the differing keys, empty when only live keys (the secrets) changed
	 */
	public List<String> startUpKeysChangedIn(FleetSettings next) {
		List<String> changed = new ArrayList<>();
		if (!Objects.equals(this.name, next.name)) {
			changed.add("gateway.lb.fleet.name");
		}
		if (this.followDrains != next.followDrains) {
			changed.add("gateway.lb.fleet.follow-drains");
		}
		if (this.followRollouts != next.followRollouts) {
			changed.add("gateway.lb.fleet.follow-rollouts");
		}
		return changed;
	}

}
