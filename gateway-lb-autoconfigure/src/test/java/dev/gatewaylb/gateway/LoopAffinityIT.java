package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.upstream.Upstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code pool.loop-affinity: preferred} (the default) under a storm, on every transport
 * (the transport matrix runs it on epoll, NIO and io_uring): 64 clients, spread by the
 * gateway over its event loops, on one endpoint capped at 4 connections. The cap is one
 * per endpoint over all loops, so the backend never sees more than 4 connections, and
 * every request is served (the queue is deep enough), as with Reactor Netty's one pool
 * ({@code off}, the second service, under the same storm).
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class LoopAffinityIT extends GatewayIntegrationTest {

	static final TestBackend grouped = TestBackend.start("grouped");

	static final TestBackend shared = TestBackend.start("shared");

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("grouped")
			.instances("grouped", List.of(grouped))
			.set("gateway.lb.services.grouped.pool.max-connections", 4)
			.set("gateway.lb.services.grouped.pool.max-pending", 1024)
			.set("gateway.lb.services.grouped.pool.pending-timeout", "30s")
			.route("shared")
			.instances("shared", List.of(shared))
			.set("gateway.lb.services.shared.pool.max-connections", 4)
			.set("gateway.lb.services.shared.pool.max-pending", 1024)
			.set("gateway.lb.services.shared.pool.pending-timeout", "30s")
			.set("gateway.lb.services.shared.pool.loop-affinity", "off")
			.set("management.endpoints.web.exposure.include", "prometheus");
	}

	@AfterAll
	static void stopBackends() {
		List.of(grouped, shared).forEach(TestBackend::close);
	}

	@Test
	void sixtyFourClientsNeverOpenMoreThanTheCapAndAreAllServed() {
		storm("grouped", grouped);
		assertThat(this.client.getNow("/actuator/prometheus").body())
			.as("the borrowed-connections counter of the endpoint")
			.contains("gateway_lb_pool_borrowed_total{")
			.contains("service=\"grouped\"");
	}

	@Test
	void reactorNettysOwnPoolUnderTheSameStorm() {
		storm("shared", shared);
		assertThat(this.client.getNow("/actuator/prometheus").body()).as("no grouping, no counter")
			.doesNotContain("service=\"shared\",");
	}

	private void storm(String service, TestBackend backend) {
		assertThat(this.client.getNow("/" + service + "/warm-up").status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> backend.active() == 0);
		backend.reset();
		backend.resetConnections();
		// A few milliseconds at the backend, so that requests overlap and queue.
		backend.delay(Duration.ofMillis(2));
		try {
			List<Integer> statuses = Flux.range(0, 64)
				.flatMap((client) -> Flux.range(0, 12)
					.concatMap((i) -> this.client.get("/" + service + "/" + client + "-" + i, Map.of())), 64)
				.map(GatewayClient.Answer::status)
				.collectList()
				.block(Duration.ofSeconds(60));
			assertThat(statuses).hasSize(64 * 12).allSatisfy((status) -> assertThat(status).isEqualTo(200));
		}
		finally {
			backend.delay(Duration.ZERO);
		}
		assertThat(backend.requests()).isEqualTo(64 * 12);
		assertThat(backend.maxConnections()).as("connections open to the backend at once").isBetween(1, 4);
		Upstream upstream = ready(service).upstream();
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			Upstream.PoolCounts counts = upstream.counts();
			assertThat(counts.active()).as("connections in use after the storm").isZero();
			assertThat(counts.pending()).as("requests waiting after the storm").isZero();
			assertThat(counts.idle()).as("connections kept").isBetween(1, 4);
		});
	}

}
