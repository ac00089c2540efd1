package dev.gatewaylb.gateway;

import java.util.List;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A gateway application for integration tests, and helpers to declare its routes and
 * discovered instances as properties.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class TestGateway {

	private int routes;

	private int filters;

	private final DynamicPropertyRegistry registry;

	private TestGateway(DynamicPropertyRegistry registry) {
		this.registry = registry;
	}

	TestGateway() {
		this.registry = null;
	}

	static TestGateway properties(DynamicPropertyRegistry registry) {
		return new TestGateway(registry);
	}

	/**
	 * Routes {@code /<service>/**} to {@code lb://<service>} with the prefix stripped.
	 */
	TestGateway route(String service) {
		String route = "spring.cloud.gateway.server.webflux.routes[" + this.routes++ + "]";
		this.registry.add(route + ".id", () -> service);
		this.registry.add(route + ".uri", () -> "lb://" + service);
		this.registry.add(route + ".predicates[0]", () -> "Path=/" + service + "/**");
		this.registry.add(route + ".filters[0]", () -> "StripPrefix=1");
		this.filters = 1;
		return this;
	}

	/**
	 * Adds a filter to the route declared last, after its {@code StripPrefix=1}.
	 */
	TestGateway filter(String filter) {
		this.registry.add(
				"spring.cloud.gateway.server.webflux.routes[" + (this.routes - 1) + "].filters[" + this.filters++ + "]",
				() -> filter);
		return this;
	}

	/**
	 * Declares the backends as the service's instances, with the given weights.
	 */
	TestGateway instances(String service, List<TestBackend> backends, int... weights) {
		for (int i = 0; i < backends.size(); i++) {
			String instance = "spring.cloud.discovery.client.simple.instances." + service + "[" + i + "]";
			TestBackend backend = backends.get(i);
			this.registry.add(instance + ".uri", backend::uri);
			this.registry.add(instance + ".instance-id", backend::name);
			if (weights.length > i) {
				int weight = weights[i];
				this.registry.add(instance + ".metadata.weight", () -> weight);
			}
		}
		return this;
	}

	/**
	 * Declares instances of a service by URI, weight 1 each.
	 */
	TestGateway uris(String service, List<String> uris) {
		for (int i = 0; i < uris.size(); i++) {
			String uri = uris.get(i);
			this.registry.add("spring.cloud.discovery.client.simple.instances." + service + "[" + i + "].uri",
					() -> uri);
		}
		return this;
	}

	TestGateway set(String property, Object value) {
		this.registry.add(property, () -> value);
		return this;
	}

}
