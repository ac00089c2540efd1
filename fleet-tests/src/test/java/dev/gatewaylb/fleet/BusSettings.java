package dev.gatewaylb.fleet;

import java.util.HashMap;
import java.util.Map;

/**
 * The properties a replica needs for Spring Cloud Bus on the tests' broker
 * ({@link AmqpBroker}), the ones docs/fleet.md gives.
 */
final class BusSettings {

	private BusSettings() {
	}

	/**
	 * The bus's exchange for these tests: a broker shared with other applications (on a
	 * developer's machine) would otherwise carry their events to these replicas and these
	 * to theirs.
	 */
	static final String DESTINATION = "gatewayLbFleetIT";

	/**
	 * The replicas' application name: every bus id starts with it, as the fleet's events
	 * are for {@code <name>:**}.
	 */
	static final String APPLICATION = "fleet-it";

	static Map<String, Object> replica(String id, AmqpBroker broker) {
		Map<String, Object> properties = new HashMap<>();
		properties.put("spring.cloud.bus.destination", DESTINATION);
		properties.put("spring.rabbitmq.host", broker.host());
		properties.put("spring.rabbitmq.port", broker.port());
		properties.put("spring.application.name", APPLICATION);
		properties.put("spring.cloud.bus.id", APPLICATION + ":" + id);
		// RabbitMQ 3.10 refuses the anonymous queue Spring AMQP 4 declares: a group per
		// replica, its queue not durable.
		properties.put("spring.cloud.stream.bindings.springCloudBusInput.group", id);
		properties.put("spring.cloud.stream.rabbit.bindings.springCloudBusInput.consumer.durable-subscription", false);
		properties.put("management.endpoints.web.exposure.include", "gatewaylb,busrefresh,refresh,health");
		return properties;
	}

}
