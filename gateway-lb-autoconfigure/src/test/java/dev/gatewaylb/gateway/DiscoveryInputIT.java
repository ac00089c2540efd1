package dev.gatewaylb.gateway;

import java.util.List;
import java.util.Map;

import dev.gatewaylb.gateway.discovery.InstanceSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A registry that hands out bad entries beside good ones, on a real gateway: the valid
 * instances serve every request, and {@code gateway.lb.discovery.rejected} counts the
 * others by reason.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(DiscoveryInputIT.BadRegistry.class)
class DiscoveryInputIT extends GatewayIntegrationTest {

	static final TestBackend good = TestBackend.start("good");

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry).route("mixed").set("management.endpoints.web.exposure.include", "prometheus");
	}

	@AfterAll
	static void stopBackend() {
		good.close();
	}

	@Test
	void theValidInstancesServeAndTheRestAreCountedByReason() {
		for (int i = 0; i < 30; i++) {
			GatewayClient.Answer answer = this.client.getNow("/mixed/");
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.backend()).isEqualTo("good");
		}
		await().untilAsserted(() -> {
			assertThat(metric("gateway_lb_discovery_rejected_total{reason=\"no-host\",service=\"mixed\"}"))
				.isGreaterThanOrEqualTo(1);
			assertThat(metric("gateway_lb_discovery_rejected_total{reason=\"invalid-host\",service=\"mixed\"}"))
				.isGreaterThanOrEqualTo(2);
			assertThat(metric("gateway_lb_discovery_rejected_total{reason=\"invalid-port\",service=\"mixed\"}"))
				.isGreaterThanOrEqualTo(2);
			assertThat(metric("gateway_lb_discovery_rejected_total{reason=\"duplicate\",service=\"mixed\"}"))
				.isGreaterThanOrEqualTo(1);
		});
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class BadRegistry {

		@Bean
		InstanceSource badRegistry() {
			return new ScriptedInstanceSource((serviceId) -> Mono
				.just(List.of(new DefaultServiceInstance("n", serviceId, null, 80, false, Map.of()),
						new DefaultServiceInstance("h", serviceId, "bad host", 80, false, Map.of()),
						new DefaultServiceInstance("u", serviceId, "evil.com/x#", 80, false, Map.of()),
						new DefaultServiceInstance("p0", serviceId, "127.0.0.1", 0, false, Map.of()),
						new DefaultServiceInstance("p7", serviceId, "127.0.0.1", 70000, false, Map.of()),
						new DefaultServiceInstance("good", serviceId, "127.0.0.1", good.port(), false, null),
						new DefaultServiceInstance("good-again", serviceId, "127.0.0.1", good.port(), false,
								Map.of("weight", "5")))));
		}

	}

}
