package dev.gatewaylb.bus;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonCreator;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.bus.event.Destination;

/**
 * A replica that starts asks its fleet where each rollout stands and which endpoints are
 * drained; every peer that knows answers with a {@link FleetStateEvent} to it alone.
 */
public class FleetStateRequestEvent extends FleetEvent {

	/**
	 * For Jackson.
	 */
	public FleetStateRequestEvent() {
	}

	/**
	 * Creates the event. Public for the fleet's publisher, in another package; never
	 * Jackson's creator, which would call it with a {@code null} source: Jackson takes
	 * the constructor without arguments and the setters.
	 * @param source the publisher
	 * @param origin this replica's bus id
	 * @param destination every replica of the fleet
	 * @param fleet the fleet's name
	 * @param version this replica's clock
	 */
	@JsonCreator(mode = JsonCreator.Mode.DISABLED)
	public FleetStateRequestEvent(Object source, String origin, Destination destination, String fleet, long version) {
		super(source, origin, destination, fleet, version);
	}

	@Override
	public List<@Nullable String> signedFields() {
		return List.of();
	}

	@Override
	public @Nullable String invalidField() {
		return null;
	}

}
