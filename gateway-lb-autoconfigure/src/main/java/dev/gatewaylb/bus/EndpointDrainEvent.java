package dev.gatewaylb.bus;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import com.fasterxml.jackson.annotation.JsonCreator;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.bus.event.Destination;

/**
 * An endpoint drained, or brought back, through one replica's actuator, for every replica
 * of the fleet. Serialized as JSON by Spring Cloud Bus.
 */
public class EndpointDrainEvent extends FleetEvent {

	private String service = "";

	private String endpoint = "";

	private boolean drain;

	private boolean force;

	/**
	 * For Jackson.
	 */
	public EndpointDrainEvent() {
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
	 * @param service the service id
	 * @param endpoint the endpoint's {@code host:port}
	 * @param drain whether it drains
	 * @param force whether the operator drained it beyond
	 * {@code health.max-drain-percent}
	 */
	@JsonCreator(mode = JsonCreator.Mode.DISABLED)
	public EndpointDrainEvent(Object source, String origin, Destination destination, String fleet, long version,
			String service, String endpoint, boolean drain, boolean force) {
		super(source, origin, destination, fleet, version);
		this.service = service;
		this.endpoint = endpoint;
		this.drain = drain;
		this.force = force;
	}

	public String getService() {
		return this.service;
	}

	public void setService(@Nullable String service) {
		// A peer's JSON may say null: an empty value, which no check takes.
		this.service = Objects.requireNonNullElse(service, "");
	}

	public String getEndpoint() {
		return this.endpoint;
	}

	public void setEndpoint(@Nullable String endpoint) {
		this.endpoint = Objects.requireNonNullElse(endpoint, "");
	}

	public boolean isDrain() {
		return this.drain;
	}

	public void setDrain(boolean drain) {
		this.drain = drain;
	}

	public boolean isForce() {
		return this.force;
	}

	public void setForce(boolean force) {
		this.force = force;
	}

	@Override
	public List<@Nullable String> signedFields() {
		return Arrays.asList(this.service, this.endpoint, String.valueOf(this.drain), String.valueOf(this.force));
	}

	@Override
	public @Nullable String invalidField() {
		if (!isName(this.service)) {
			return "service";
		}
		return isName(this.endpoint) ? null : "endpoint";
	}

}
