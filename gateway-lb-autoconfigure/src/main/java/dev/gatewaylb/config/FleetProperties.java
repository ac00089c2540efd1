package dev.gatewaylb.config;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The fleet channel, under {@code gateway.lb.fleet}: how the replicas of one gateway
 * fleet tell each other their decisions over Spring Cloud Bus. Taken at start-up.
 *
 * @param name Name of the fleet, carried in every event: a replica follows only the
 * events of its own fleet, so two fleets on one broker (edge and internal, staging and
 * production) never steer each other. Unset: spring.application.name.
 * @param secret Signs every event with HMAC-SHA256; a replica with a secret drops events
 * that are unsigned or signed with another (counted). At least 32 bytes; the same on
 * every replica of the fleet. Unset: events are not signed. Live: a refresh applies it.
 * @param followDrains Whether this replica drains and undrains endpoints as the fleet's
 * other replicas do.
 * @param followRollouts Whether this replica follows the rollout decisions of the fleet's
 * other replicas, and asks them for each rollout's state when it starts.
 * @param previousSecrets Secrets whose signatures are still accepted while the fleet
 * moves to a new secret: events are signed with secret only. Each at least 32 bytes.
 * Live.
 */
public record FleetProperties(@Nullable String name, @Nullable String secret,
		@DefaultValue("true") boolean followDrains, @DefaultValue("true") boolean followRollouts,
		@Nullable List<String> previousSecrets) {

	/**
	 * A fleet block that sets nothing.
	 */
	public static final FleetProperties NONE = new FleetProperties(null, null, true, true, null);

	public FleetProperties {
		previousSecrets = (previousSecrets != null) ? List.copyOf(previousSecrets) : List.of();
	}

	@Override
	public List<String> previousSecrets() {
		return (this.previousSecrets != null) ? this.previousSecrets : List.of();
	}

	@Override
	public String toString() {
		// The secret stays out of logs and reports.
		return "FleetProperties[name=" + this.name + ", secret=" + ((this.secret != null) ? "(set)" : "null")
				+ ", followDrains=" + this.followDrains + ", followRollouts=" + this.followRollouts
				+ ", previousSecrets=(" + previousSecrets().size() + " set)]";
	}

}
