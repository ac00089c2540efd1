package dev.gatewaylb.bus;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import com.fasterxml.jackson.annotation.JsonCreator;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.bus.event.Destination;

/**
 * A rollout decision one replica took, for every replica of the fleet: the split, the
 * fingerprint of the rollout block it was about (with its {@code rollout.id}), the
 * action, why, and whether an operator asked for it. Serialized as JSON by Spring Cloud
 * Bus; the no-argument constructor and setters are Jackson's.
 */
public class RolloutVerdictEvent extends FleetEvent {

	private String split = "";

	private String plan = "";

	private String action = "";

	private @Nullable String reason;

	private boolean byOperator;

	/**
	 * For Jackson.
	 */
	public RolloutVerdictEvent() {
	}

	/**
	 * Creates the event. Public for the fleet's publisher, in another package; never
	 * Jackson's creator, which would call it with a {@code null} source: Jackson takes
	 * the constructor without arguments and the setters.
	 * @param source the publisher
	 * @param origin this replica's bus id
	 * @param destination every replica of the fleet
	 * @param fleet the fleet's name
	 * @param version the decision's version
	 * @param split the split's name
	 * @param plan the rollout block's fingerprint
	 * @param action the action's label ({@code roll-back}, {@code promote},
	 * {@code pause}, {@code resume})
	 * @param reason why
	 * @param byOperator whether an operator asked for it
	 */
	@JsonCreator(mode = JsonCreator.Mode.DISABLED)
	public RolloutVerdictEvent(Object source, String origin, Destination destination, String fleet, long version,
			String split, String plan, String action, @Nullable String reason, boolean byOperator) {
		super(source, origin, destination, fleet, version);
		this.split = split;
		this.plan = plan;
		this.action = action;
		this.reason = reason;
		this.byOperator = byOperator;
	}

	public String getSplit() {
		return this.split;
	}

	public void setSplit(@Nullable String split) {
		// A peer's JSON may say null: an empty value, which no check takes.
		this.split = Objects.requireNonNullElse(split, "");
	}

	public String getPlan() {
		return this.plan;
	}

	public void setPlan(@Nullable String plan) {
		this.plan = Objects.requireNonNullElse(plan, "");
	}

	public String getAction() {
		return this.action;
	}

	public void setAction(@Nullable String action) {
		this.action = Objects.requireNonNullElse(action, "");
	}

	public @Nullable String getReason() {
		return this.reason;
	}

	public void setReason(@Nullable String reason) {
		this.reason = reason;
	}

	public boolean isByOperator() {
		return this.byOperator;
	}

	public void setByOperator(boolean byOperator) {
		this.byOperator = byOperator;
	}

	@Override
	public List<@Nullable String> signedFields() {
		return Arrays.asList(this.split, this.plan, this.action, this.reason, String.valueOf(this.byOperator));
	}

	@Override
	public @Nullable String invalidField() {
		if (!isName(this.split)) {
			return "split";
		}
		// A fingerprint has spaces between its parts: bounded, no control characters.
		if (!isName(this.plan.replace(' ', '_'))) {
			return "plan";
		}
		if (!isName(this.action)) {
			return "action";
		}
		return isReason(this.reason) ? null : "reason";
	}

}
