package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code health.passive.on-statuses} over real sockets: with Envoy's gateway failures
 * (502, 503, 504) an application that answers 500 keeps its share of the traffic; with
 * the default every 5xx counts and the same endpoint is ejected; a connection that fails
 * counts whatever the list.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PassiveStatusesIT extends GatewayIntegrationTest {

	static final List<HealthBackend> gatewayFailures = HealthBackend.start("g", 3);

	static final List<HealthBackend> every5xx = HealthBackend.start("e", 3);

	static final List<HealthBackend> refusing = HealthBackend.start("c", 3);

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		HealthBackend.route(gateway, "gateway-failures", gatewayFailures)
			.set("gateway.lb.services.gateway-failures.health.passive.on-statuses", "502,503,504")
			.set("gateway.lb.services.gateway-failures.health.passive.consecutive-failures", 3)
			.set("gateway.lb.services.gateway-failures.health.passive.base-ejection-time", "30s");
		HealthBackend.route(gateway, "every-5xx", every5xx)
			.set("gateway.lb.services.every-5xx.health.passive.consecutive-failures", 3)
			.set("gateway.lb.services.every-5xx.health.passive.base-ejection-time", "30s");
		HealthBackend.route(gateway, "refusing", refusing)
			.set("gateway.lb.services.refusing.health.passive.on-statuses", "503")
			.set("gateway.lb.services.refusing.health.passive.consecutive-failures", 3)
			.set("gateway.lb.services.refusing.health.passive.base-ejection-time", "30s");
	}

	@AfterAll
	static void stopBackends() {
		List.of(gatewayFailures, every5xx, refusing).forEach((backends) -> backends.forEach(HealthBackend::close));
	}

	@Test
	void keepsAnEndpointThatAnswers500InItsShareWhenOnlyGatewayFailuresCount() {
		HealthBackend erring = gatewayFailures.get(1);
		erring.status(500);
		int errors = 0;
		for (int i = 0; i < 60; i++) {
			errors += (this.client.getNow("/gateway-failures/").status() == 500) ? 1 : 0;
		}
		// Round-robin over three: 20 each, and 500 is not retried.
		assertThat(erring.requests()).as("the 500 endpoint's share").isEqualTo(20);
		assertThat(errors).as("its answers pass on to the client").isEqualTo(20);
		assertThat(state("gateway-failures", erring.address()).isEjected(this.runtimes.nanoTime())).isFalse();
		assertThat(state("gateway-failures", erring.address()).consecutiveFailures())
			.as("an answer that does not count is a success")
			.isZero();
	}

	@Test
	void ejectsTheSameEndpointWhenEvery5xxCounts() {
		HealthBackend erring = every5xx.get(1);
		erring.status(500);
		int sent = 0;
		for (; erring.requests() < 3; sent++) {
			this.client.getNow("/every-5xx/");
		}
		// Three failures in a row eject it and the balancer rebuilds without it; no
		// request is sent until picks see that, so its count is exact.
		await().atMost(Duration.ofSeconds(5)).until(() -> !isPickable("every-5xx", erring.address()));
		assertThat(state("every-5xx", erring.address()).isEjected(this.runtimes.nanoTime())).isTrue();
		for (; sent < 60; sent++) {
			assertThat(this.client.getNow("/every-5xx/").status()).isEqualTo(200);
		}
		assertThat(erring.requests()).as("its share up to its third failure, then none").isEqualTo(3);
	}

	@Test
	void ejectsAnEndpointThatRefusesConnectionsWhateverTheStatusesThatCount() {
		HealthBackend dead = refusing.get(1);
		dead.kill();
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			// Connect failures are retried: the client sees none of them.
			assertThat(this.client.getNow("/refusing/").status()).isEqualTo(200);
			return state("refusing", dead.address()).isEjected(this.runtimes.nanoTime());
		});
	}

}
