package dev.gatewaylb.kubernetes;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
	void aConfiguredServiceWhoseServiceHasSeveralPortsAndNoneNamedHttpFailsStartUpNamingTheKey() {
		KubernetesMockServer server = new KubernetesMockServer(new io.fabric8.mockwebserver.Context(),
				new io.fabric8.mockwebserver.MockWebServer(), new java.util.HashMap<>(),
				new io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher(), false);
		server.init();
		try (KubernetesClient client = server.createClient()) {
			client.discovery()
				.v1()
				.endpointSlices()
				.inNamespace("store")
				.resource(SliceInstancesTests.slice("multi-1", "IPv4",
						List.of(SliceInstancesTests.port("grpc", 9000), SliceInstancesTests.port("admin", 9001)),
						SliceInstancesTests.endpoint("10.0.0.1", "pod-1", true, null, null)))
				.create();
			KubernetesInstanceSource unnamed = new KubernetesInstanceSource(client, "store", Map.of(),
					Duration.ofSeconds(5), BALANCES_ALL, null);
			unnamed.start();
			// The slice's Service is "shop" (SliceInstancesTests' label).
			assertThatIllegalStateException().isThrownBy(() -> unnamed.checkPorts(Set.of("shop")))
				.withMessageContaining("set gateway.lb.services.shop.kubernetes.port");
			unnamed.close();
			KubernetesInstanceSource named = new KubernetesInstanceSource(client, "store",
					Map.of("shop", new ServiceTarget("store", "shop", "grpc")), Duration.ofSeconds(5), BALANCES_ALL,
					null);
			named.start();
			named.checkPorts(Set.of("shop"));
			assertThat(named.instances("shop").block()).extracting(ServiceInstance::getPort).containsExactly(9000);
			named.close();
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
		assertThat(GatewayLbKubernetesAutoConfiguration.serviceIds(environment)).containsExactlyInAnyOrder("Shop",
				"cart");
	}

}
