package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.gatewaylb.gateway.discovery.InstanceSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code gatewayLb} health indicator on a real gateway: UP while the background loops
 * run, DOWN (503 on {@code /actuator/health/gatewayLb}, the stuck loops named) while a
 * discovery client blocks the control thread, and UP again once it returns.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(ControlHealthIT.BlockingDiscovery.class)
class ControlHealthIT {

	static final TestBackend backend = TestBackend.start("a");

	/**
	 * When set, every discovery read waits on it, on the control thread that asks.
	 */
	static final AtomicReference<CountDownLatch> hold = new AtomicReference<>();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("held")
			.set("management.endpoints.web.exposure.include", "health")
			.set("management.endpoint.health.show-details", "always");
	}

	@LocalServerPort
	int port;

	@AfterEach
	void release() {
		CountDownLatch latch = hold.getAndSet(null);
		if (latch != null) {
			latch.countDown();
		}
	}

	@AfterAll
	static void stopBackend() {
		backend.close();
	}

	@Test
	void downWhileADiscoveryClientBlocksTheControlThreadAndUpAgainAfter() {
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			Answer answer = health();
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.body()).contains("\"status\":\"UP\"", "\"discovery-poll\"", "\"rollout-tick\"");
		});
		CountDownLatch latch = new CountDownLatch(1);
		hold.set(latch);
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			Answer answer = health();
			assertThat(answer.status()).isEqualTo(503);
			assertThat(answer.body()).contains("\"status\":\"DOWN\"", "\"stuck\":[", "\"discovery-poll\"");
		});
		hold.set(null);
		latch.countDown();
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			Answer answer = health();
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.body()).contains("\"status\":\"UP\"").doesNotContain("\"stuck\"");
		});
	}

	private Answer health() {
		return HttpClient.newConnection()
			.get()
			.uri("http://127.0.0.1:" + this.port + "/actuator/health/gatewayLb")
			.responseSingle((response, body) -> body.asString()
				.defaultIfEmpty("")
				.map((text) -> new Answer(response.status().code(), text)))
			.block(Duration.ofSeconds(10));
	}

	record Answer(int status, String body) {
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class BlockingDiscovery {

		@Bean
		InstanceSource blockingInstanceSource() {
			return new ScriptedInstanceSource((serviceId) -> {
				CountDownLatch latch = hold.get();
				if (latch != null) {
					// A discovery client that blocks the caller: the control thread.
					try {
						latch.await(30, TimeUnit.SECONDS);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}
				return Mono
					.just(List.of(new DefaultServiceInstance("a", serviceId, "127.0.0.1", backend.port(), false)));
			});
		}

	}

}
