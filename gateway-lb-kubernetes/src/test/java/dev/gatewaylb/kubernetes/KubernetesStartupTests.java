package dev.gatewaylb.kubernetes;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.gateway.discovery.InstanceSource;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What fails start-up, and how it says so: a missing permission names the verb, the
 * resource and the namespace; a bad key names the property and its value.
 */
class KubernetesStartupTests {

	private static final InstanceSource BALANCES_ALL = new InstanceSource() {

		@Override
		public boolean balancesHere(String serviceId) {
			return true;
		}

		@Override
		public Mono<List<ServiceInstance>> instances(String serviceId) {
			return Mono.just(List.of());
		}

	};

	@Test
	void aClientThatMayNotListEndpointSlicesFailsStartUpNamingWhatIsMissing() {
		KubernetesMockServer server = new KubernetesMockServer(false);
		server.init();
		try (KubernetesClient client = server.createClient()) {
			server.expect()
				.get()
				.withPath("/apis/discovery.k8s.io/v1/namespaces/locked/endpointslices?limit=1")
				.andReturn(403,
						new StatusBuilder().withCode(403)
							.withReason("Forbidden")
							.withMessage("endpointslices.discovery.k8s.io is forbidden")
							.build())
				.always();
			KubernetesInstanceSource source = new KubernetesInstanceSource(client, "locked", Map.of(),
					Duration.ofSeconds(1), BALANCES_ALL, null);
			assertThatIllegalStateException().isThrownBy(source::start)
				.withMessageContaining("may not list endpointslices (API group discovery.k8s.io) in namespace locked");
			source.close();
		}
		finally {
			server.destroy();
		}
	}

	@Test
	void badKeysNameThePropertyAndTheValue() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new KubernetesDiscoveryProperties(true, "Not_A_Namespace", Duration.ofSeconds(10)))
			.withMessageStartingWith("gateway.lb.kubernetes.namespace: 'Not_A_Namespace'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new KubernetesDiscoveryProperties(true, null, Duration.ofHours(1)))
			.withMessageStartingWith("gateway.lb.kubernetes.initial-sync-timeout: PT1H");
		MockEnvironment environment = new MockEnvironment()
			.withProperty("gateway.lb.services.shop.kubernetes.port", "70000")
			.withProperty("gateway.lb.services.shop.algorithm", "least-requests");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> GatewayLbKubernetesAutoConfiguration.targets(environment, "store"))
			.withMessageStartingWith("gateway.lb.services.shop.kubernetes.port: '70000'");
	}

	@Test
	void aServiceBlockNamesItsServiceNamespaceAndPortAndTheOthersKeepTheirDefault() {
		MockEnvironment environment = new MockEnvironment()
			.withProperty("gateway.lb.services.Shop.kubernetes.service", "shop-v2")
			.withProperty("gateway.lb.services.Shop.kubernetes.namespace", "store")
			.withProperty("gateway.lb.services.Shop.kubernetes.port", "web")
			.withProperty("gateway.lb.services.cart.algorithm", "least-requests");
		Map<String, ServiceTarget> targets = GatewayLbKubernetesAutoConfiguration.targets(environment, "default");
		assertThat(targets).isEqualTo(Map.of("shop", new ServiceTarget("store", "shop-v2", "web")));
		assertThat(ServiceTarget.of("Cart", "default")).isEqualTo(new ServiceTarget("default", "cart", null));
	}

}
