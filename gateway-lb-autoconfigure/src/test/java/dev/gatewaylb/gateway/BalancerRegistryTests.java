package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class BalancerRegistryTests {

	private static final List<ServiceInstance> INSTANCES = List.of(instance("a", 1), instance("b", 2),
			instance("c", 3));

	@Test
	void spreadsPicksOutsideAGatewayExchangeUniformlyForLoadAwareAlgorithms() {
		BalancerRegistry registry = registry(Map.of("gateway.lb.defaults.algorithm", "least-requests"));
		Map<String, Integer> counts = new HashMap<>();
		int picks = 30_000;
		for (int i = 0; i < picks; i++) {
			counts.merge(registry.choose("svc", INSTANCES, null).getServer().getInstanceId(), 1, Integer::sum);
		}
		double p = 1.0 / 3;
		double bound = 4 * Math.sqrt(picks * p * (1 - p));
		assertThat(counts.values()).hasSize(3)
			.allSatisfy((count) -> assertThat((double) count).isBetween(picks * p - bound, picks * p + bound));
		assertThat(registry.snapshot("svc").state(0).inFlight()).isZero();
	}

	@Test
	void keepsRoundRobinOutsideAGatewayExchange() {
		BalancerRegistry registry = registry(Map.of());
		StringBuilder sequence = new StringBuilder();
		for (int i = 0; i < 6; i++) {
			sequence.append(registry.choose("svc", INSTANCES, null).getServer().getInstanceId());
		}
		// nginx over weights 1, 2, 3; at the third step a and c tie at 3 and a wins.
		assertThat(sequence).hasToString("cbacbc");
	}

	@Test
	void rebuildsWhenTheInstanceListChangesAndKeepsStateOfStayingEndpoints() {
		BalancerRegistry registry = registry(Map.of());
		registry.choose("svc", INSTANCES, null);
		long picksOfA = registry.snapshot("svc").state(0).picks();
		registry.choose("svc", List.of(instance("a", 1), instance("d", 1)), null);
		assertThat(registry.snapshot("svc").endpoints()).hasSize(2);
		assertThat(registry.snapshot("svc").state(0).picks()).isGreaterThanOrEqualTo(picksOfA);
		assertThat(registry.snapshot("svc").state(1).address()).endsWith(":4");
	}

	static BalancerRegistry registry(Map<String, Object> properties) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		return new BalancerRegistry(new LiveSettings(GatewayLbSettings.bind(environment)), System::nanoTime);
	}

	static ServiceInstance instance(String id, int weight) {
		int port = id.charAt(0) - 'a' + 1;
		return new DefaultServiceInstance(id, "svc", "10.0.0." + port, port, false, Map.of("weight", "" + weight));
	}

}
