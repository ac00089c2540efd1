package dev.gatewaylb.fleet;

import java.lang.reflect.Field;
import java.util.UUID;

import org.springframework.cloud.bus.ServiceMatcher;
import org.springframework.cloud.bus.event.RemoteApplicationEvent;

/**
 * Events a test sends on the bus as if a replica had: what a replay or a late event looks
 * like on the wire.
 */
final class BusEvents {

	private BusEvents() {
	}

	/**
	 * Gives an event made with its Jackson constructor the envelope the bus sets when it
	 * reads one: a new id, the replica as its origin (so that publishing it in the
	 * replica's context sends it on the bus) and the fleet's destination.
	 */
	static <E extends RemoteApplicationEvent> E from(Gateway replica, E event) {
		return envelope(event, replica.context().getBean(ServiceMatcher.class).getBusId(),
				BusSettings.APPLICATION + ":**");
	}

	/**
	 * Gives an event a new id, an origin and a destination, as the bus does when it reads
	 * one.
	 */
	static <E extends RemoteApplicationEvent> E envelope(E event, String origin, String destination) {
		set(event, "originService", origin);
		set(event, "destinationService", destination);
		set(event, "id", UUID.randomUUID().toString());
		return event;
	}

	private static void set(RemoteApplicationEvent event, String name, String value) {
		try {
			Field field = RemoteApplicationEvent.class.getDeclaredField(name);
			field.setAccessible(true);
			field.set(event, value);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("RemoteApplicationEvent." + name, ex);
		}
	}

}
