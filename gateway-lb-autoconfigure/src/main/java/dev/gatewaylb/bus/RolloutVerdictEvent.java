package dev.gatewaylb.bus;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.bus.event.Destination;
import org.springframework.cloud.bus.event.RemoteApplicationEvent;

/**
 * A rollout decision one replica took, for every replica of the fleet: the split, the
 * fingerprint of the rollout block it was about, the action and why. Serialized as JSON
 * by Spring Cloud Bus; the no-argument constructor and setters are Jackson's.
 */
public class RolloutVerdictEvent extends RemoteApplicationEvent {

	private String split = "";

	private String plan = "";

	private String action = "";

	private @Nullable String reason;

	/**
	 * For Jackson.
	 */
	public RolloutVerdictEvent() {
	}

	/**
	 * Creates the event. Not public, so that Jackson 3 takes the constructor without
	 * arguments and the setters, not this one (whose source would be null).
	 * @param source the publisher
	 * @param origin this replica's bus id
	 * @param destination every replica
	 * @param split the split's name
	 * @param plan the rollout block's fingerprint
	 * @param action the action's label ({@code roll-back}, {@code promote},
	 * {@code pause}, {@code resume})
	 * @param reason why
	 */
	RolloutVerdictEvent(Object source, String origin, Destination destination, String split, String plan, String action,
			@Nullable String reason) {
		super(source, origin, destination);
		this.split = split;
		this.plan = plan;
		this.action = action;
		this.reason = reason;
	}

	public String getSplit() {
		return this.split;
	}

	public void setSplit(String split) {
		this.split = split;
	}

	public String getPlan() {
		return this.plan;
	}

	public void setPlan(String plan) {
		this.plan = plan;
	}

	public String getAction() {
		return this.action;
	}

	public void setAction(String action) {
		this.action = action;
	}

	public @Nullable String getReason() {
		return this.reason;
	}

	public void setReason(@Nullable String reason) {
		this.reason = reason;
	}

}
