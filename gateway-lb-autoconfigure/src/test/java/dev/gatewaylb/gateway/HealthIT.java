package dev.gatewaylb.gateway;

import dev.gatewaylb.internal.discovery.Member;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.balance.Snapshot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Dead and sick backends under traffic: ejection and return, fail open, retries that hide
 * failures within their budget, draining, active checks.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class HealthIT extends GatewayIntegrationTest {

	static final List<HealthBackend> killable = HealthBackend.start("k", 3);

	static final List<HealthBackend> sick = HealthBackend.start("s", 3);

	static final List<HealthBackend> allSick = HealthBackend.start("a", 3);

	static final List<HealthBackend> retrying = HealthBackend.start("r", 2);

	static final List<HealthBackend> storming = HealthBackend.start("t", 2);

	static final List<HealthBackend> draining = HealthBackend.start("d", 3);

	static final List<HealthBackend> checked = HealthBackend.start("c", 3);

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry)
			.set("management.endpoints.web.exposure.include", "gatewaylb,prometheus")
			.set("management.endpoint.gatewaylb.access", "unrestricted");
		// A route's service that discovery lists no instance of.
		gateway.route("empty");
		HealthBackend.route(gateway, "kill", killable)
			.set("gateway.lb.services.kill.health.passive.consecutive-failures", 3)
			.set("gateway.lb.services.kill.health.passive.base-ejection-time", "5s");
		HealthBackend.route(gateway, "sick", sick)
			.set("gateway.lb.services.sick.health.passive.consecutive-failures", 2)
			.set("gateway.lb.services.sick.health.passive.base-ejection-time", "30s");
		HealthBackend.route(gateway, "all-sick", allSick)
			.set("gateway.lb.services.all-sick.health.passive.consecutive-failures", 2)
			.set("gateway.lb.services.all-sick.health.passive.base-ejection-time", "30s")
			.set("gateway.lb.services.all-sick.health.passive.max-ejection-percent", 100);
		HealthBackend.route(gateway, "retrying", retrying)
			.set("gateway.lb.services.retrying.health.passive.consecutive-failures", 0);
		HealthBackend.route(gateway, "storm", storming)
			.set("gateway.lb.services.storm.health.passive.consecutive-failures", 0)
			.set("gateway.lb.services.storm.retry.attempts", 3);
		HealthBackend.route(gateway, "drain", draining);
		HealthBackend.route(gateway, "checked", checked)
			.set("gateway.lb.services.checked.health.active.enabled", true)
			.set("gateway.lb.services.checked.health.active.path", "/health")
			.set("gateway.lb.services.checked.health.active.interval", "500ms")
			// A healthy probe slower than this on a busy machine would take a healthy
			// endpoint out.
			.set("gateway.lb.services.checked.health.active.timeout", "2s");
	}

	@AfterAll
	static void stopBackends() {
		List.of(killable, sick, allSick, retrying, storming, draining, checked)
			.forEach((backends) -> backends.forEach(HealthBackend::close));
	}

	@Test
	void aBackendThatDiesUnderTrafficCostsClientsNothingAndServesAgainAfterItsEjection() {
		HealthBackend dying = killable.get(1);
		try (ClientLoad traffic = new ClientLoad(this.client, "/kill/", 20)) {
			await().until(() -> traffic.served() > 300);
			dying.kill();
			await().atMost(Duration.ofSeconds(5)).until(() -> !isPickable("kill", dying.address()));
			// Requests that picked it before the rebuild, and their retries, count their
			// picks as they go: once they are over, its count stands still.
			traffic.awaitAnsweredSoFar();
			long picksWhenEjected = state("kill", dying.address()).picks();
			traffic.await(200);
			assertThat(state("kill", dying.address()).isEjected(this.runtimes.nanoTime()))
				.as("still within the 5 s ejection, so the next check means something")
				.isTrue();
			assertThat(state("kill", dying.address()).picks()).as("no picks while ejected").isEqualTo(picksWhenEjected);
			dying.start();
			int before = dying.requests();
			await().atMost(Duration.ofSeconds(15)).until(() -> dying.requests() > before + 20);
			assertThat(traffic.failures()).as("client-visible errors: %s", traffic.failureCauses()).isZero();
		}
		assertThat(metric("gateway_lb_ejections_total{endpoint=\"" + dying.address() + "\",service=\"kill\"}"))
			.isGreaterThanOrEqualTo(1);
	}

	@Test
	void ejectsABackendThatAnswers500ButNeverMoreThanTheMaximumShare() {
		sick.forEach((backend) -> backend.status(500));
		for (int i = 0; i < 60; i++) {
			this.client.getNow("/sick/");
		}
		long now = this.runtimes.nanoTime();
		Snapshot<Member> snapshot = this.runtimes.snapshot("sick");
		int ejected = 0;
		for (int i = 0; i < snapshot.size(); i++) {
			ejected += snapshot.state(i).isEjected(now) ? 1 : 0;
		}
		// 50% of 3 allows one ejection at a time.
		assertThat(ejected).isEqualTo(1);
		assertThat(snapshot.isFailOpen()).isFalse();
	}

	@Test
	void failsOpenWhenEveryBackendIsEjectedAndCountsIt() {
		allSick.forEach((backend) -> backend.status(500));
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			this.client.getNow("/all-sick/");
			return this.runtimes.snapshot("all-sick").isFailOpen();
		});
		int before = allSick.stream().mapToInt(HealthBackend::requests).sum();
		for (int i = 0; i < 30; i++) {
			assertThat(this.client.getNow("/all-sick/").status()).isEqualTo(500);
		}
		assertThat(allSick.stream().mapToInt(HealthBackend::requests).sum()).as("requests still go out")
			.isEqualTo(before + 30);
		assertThat(metric("gateway_lb_fail_open_total{service=\"all-sick\"}")).isGreaterThanOrEqualTo(30);
	}

	@Test
	void retriesAGetOnA503ButNeverAPostWithABody() {
		retrying.get(0).status(503);
		for (int i = 0; i < 20; i++) {
			GatewayClient.Answer get = this.client.getNow("/retrying/");
			assertThat(get.status()).isEqualTo(200);
			assertThat(get.backend()).as("r1 answers 503, the retry goes to r2").isEqualTo("r2");
		}
		int failedPosts = 0;
		for (int i = 0; i < 20; i++) {
			GatewayClient.Answer post = this.client.send("POST", "/retrying/", "{\"order\":" + i + "}");
			failedPosts += (post.status() == 503) ? 1 : 0;
		}
		// Round-robin sends every other POST to the backend that answers 503.
		assertThat(failedPosts).isEqualTo(10);
	}

	@Test
	void countsEveryRequestAServiceWithoutEndpointsRefuses() {
		double before = metric("gateway_lb_rejected_total{reason=\"no-endpoint\",service=\"empty\"}");
		for (int i = 0; i < 3; i++) {
			assertThat(this.client.getNow("/empty/").status()).isEqualTo(503);
		}
		assertThat(metric("gateway_lb_rejected_total{reason=\"no-endpoint\",service=\"empty\"}") - before).isEqualTo(3);
	}

	@Test
	void capsARetryStormAtTheBudget() {
		storming.forEach((backend) -> backend.status(503));
		double retriedBefore = metric("gateway_lb_retries_total{outcome=\"retried\",service=\"storm\"}");
		int requests = 600;
		// 200 requests a second for 3 seconds, every one of which fails everywhere.
		List<GatewayClient.Answer> answers = Flux.interval(Duration.ofMillis(5))
			.take(requests)
			.onBackpressureBuffer()
			.flatMap((tick) -> this.client.get("/storm/", Map.of()), requests)
			.collectList()
			.block(Duration.ofSeconds(60));
		assertThat(answers).allSatisfy((answer) -> assertThat(answer.status()).isEqualTo(503));
		double retried = metric("gateway_lb_retries_total{outcome=\"retried\",service=\"storm\"}") - retriedBefore;
		// 20% of the requests plus 10 a second over the 10 s window.
		assertThat(retried).isPositive().isLessThanOrEqualTo(requests * 0.2 + 10 * 10);
		assertThat(metric("gateway_lb_retries_total{outcome=\"budget\",service=\"storm\"}")).isPositive();
	}

	@Test
	void drainsAnEndpointUnderLoadLettingItsRequestsFinish() {
		draining.forEach((backend) -> backend.delay(Duration.ofMillis(150)));
		HealthBackend drained = draining.get(0);
		try (ClientLoad traffic = new ClientLoad(this.client, "/drain/", 10)) {
			await().until(() -> traffic.served() > 60);
			assertThat(this.client
				.send("POST", "/actuator/gatewaylb/drain",
						"{\"endpoint\":\"" + drained.address() + "\",\"drain\":true}")
				.status()).isEqualTo(200);
			assertThat(isPickable("drain", drained.address())).as("out of the picks when the drain answers").isFalse();
			// A request that picked it just before the drain counts its pick just after.
			traffic.awaitAnsweredSoFar();
			long picksAtDrain = state("drain", drained.address()).picks();
			traffic.await(60);
			assertThat(state("drain", drained.address()).picks()).as("no new picks after the drain")
				.isEqualTo(picksAtDrain);
			await().untilAsserted(() -> assertThat(state("drain", drained.address()).inFlight()).isZero());
			this.client.send("POST", "/actuator/gatewaylb/drain",
					"{\"endpoint\":\"" + drained.address() + "\",\"drain\":false}");
			traffic.await(60);
			assertThat(state("drain", drained.address()).picks()).as("back in rotation").isGreaterThan(picksAtDrain);
			assertThat(traffic.failures())
				.as("in-flight requests of the drained endpoint finished: %s", traffic.failureCauses())
				.isZero();
		}
	}

	@Test
	void takesAnEndpointThatFailsItsActiveCheckOutAndBackIn() {
		HealthBackend failing = checked.get(2);
		for (int i = 0; i < 6; i++) {
			this.client.getNow("/checked/");
		}
		failing.healthStatus(503);
		// The check marks the endpoint unhealthy, then the balancer rebuilds: picks see
		// the rebuild. Its next check does (ActiveHealthChecksIT runs the job by hand);
		// the await only bounds a hang.
		await().atMost(Duration.ofSeconds(10)).until(() -> !isPickable("checked", failing.address()));
		assertThat(state("checked", failing.address()).isHealthy()).as("taken out by its check").isFalse();
		long picks = state("checked", failing.address()).picks();
		for (int i = 0; i < 30; i++) {
			assertThat(this.client.getNow("/checked/").backend()).isNotEqualTo(failing.name());
		}
		assertThat(state("checked", failing.address()).picks()).isEqualTo(picks);
		failing.healthStatus(200);
		await().atMost(Duration.ofSeconds(10)).until(() -> isPickable("checked", failing.address()));
		int served = 0;
		for (int i = 0; i < 30; i++) {
			served += failing.name().equals(this.client.getNow("/checked/").backend()) ? 1 : 0;
		}
		// Round-robin over three equal weights: any 30 picks in a row hold 10 of each.
		assertThat(served).isEqualTo(10);
	}

}
