package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import dev.gatewaylb.internal.upstream.Upstream;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Each upstream's own connection pool: a cap per endpoint, a bounded pending queue that
 * rejects at once with 503 "upstream saturated", a pending timeout, and isolation between
 * upstreams. The backends hold the requests that fill a pool until the test lets them go,
 * so "at once" means "while they are held".
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UpstreamPoolIT extends GatewayIntegrationTest {

	static final TestBackend capped = TestBackend.start("capped");

	static final TestBackend patient = TestBackend.start("patient");

	/**
	 * One backend behind two services, so that only the services' own pools keep them
	 * apart: Reactor Netty pools per remote address, and a pool shared by the two would
	 * hand the saturated service's cap and queue to the other.
	 */
	static final TestBackend shared = TestBackend.start("shared");

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("capped")
			.instances("capped", List.of(capped))
			.set("gateway.lb.services.capped.pool.max-connections", 2)
			.set("gateway.lb.services.capped.pool.max-pending", 3)
			.route("patient")
			.instances("patient", List.of(patient))
			.set("gateway.lb.services.patient.pool.max-connections", 1)
			.set("gateway.lb.services.patient.pool.max-pending", 10)
			.set("gateway.lb.services.patient.pool.pending-timeout", "300ms")
			.route("hot")
			.instances("hot", List.of(shared))
			.set("gateway.lb.services.hot.pool.max-connections", 2)
			.set("gateway.lb.services.hot.pool.max-pending", 2)
			.route("cool")
			.instances("cool", List.of(shared))
			.set("management.endpoints.web.exposure.include", "prometheus");
	}

	@AfterAll
	static void stopBackends() {
		List.of(capped, patient, shared).forEach(TestBackend::close);
	}

	@Test
	void admitsTheCapPlusThePendingQueueAndRejectsTheRestAtOnce() {
		warmUp("capped", capped);
		capped.reset();
		capped.resetConnections();
		double rejectedBefore = rejected("capped");

		// Every request is held at the backend until the test lets them go: whatever
		// is answered before that was not queued behind the cap.
		List<CompletableFuture<GatewayClient.Answer>> answers = new ArrayList<>();
		Upstream upstream = ready("capped").upstream();
		try {
			// One at a time, each once the last is held, waiting or answered: requests
			// racing for the queue's last place from two event loops may both be turned
			// away (see the last test).
			for (int i = 0; i < 12; i++) {
				answers.add(this.client.get("/capped/" + i + "?hold=1", Map.of()).toFuture());
				int sent = i + 1;
				await().atMost(Duration.ofSeconds(10))
					.until(() -> capped.held() + upstream.counts().pending()
							+ answers.stream().filter(CompletableFuture::isDone).count() == sent);
			}
			List<GatewayClient.Answer> rejected = answers.stream()
				.filter(CompletableFuture::isDone)
				.map(CompletableFuture::join)
				.toList();
			assertThat(rejected).as("the 7 past 2 connections + 3 pending, while the others are held")
				.allSatisfy((answer) -> {
					assertThat(answer.status()).isEqualTo(503);
					assertThat(answer.body()).contains("upstream saturated");
				});
			assertThat(capped.held()).as("requests the backend holds").isEqualTo(2);
			assertThat(upstream.counts().pending()).as("requests waiting for a connection").isEqualTo(3);
		}
		finally {
			capped.release();
		}
		// The 3 pending get the 2 connections as the held ones end.
		await().atMost(Duration.ofSeconds(10)).until(() -> capped.requests() == 5 && capped.held() == 0);
		List<GatewayClient.Answer> all = answers.stream().map(CompletableFuture::join).toList();
		assertThat(all).filteredOn((answer) -> answer.status() == 200).as("2 connections + 3 pending").hasSize(5);
		assertThat(capped.requests()).isEqualTo(5);
		assertThat(capped.maxActive())
			.as("requests the backend held at once, over %d connections", capped.maxConnections())
			.isEqualTo(2);
		assertThat(capped.maxConnections()).as("connections open to the backend at once").isLessThanOrEqualTo(2);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(rejected("capped")).isEqualTo(rejectedBefore + 7));
	}

	@Test
	void answers503WhenARequestWaitsForAConnectionLongerThanThePendingTimeout() {
		warmUp("patient", patient);
		patient.reset();

		CompletableFuture<GatewayClient.Answer> first;
		GatewayClient.Answer waited;
		try {
			// The one connection is held at the backend until the test lets it go, so
			// the second request can only end by its 300 ms pending timeout.
			first = this.client.get("/patient/0?hold=1", Map.of()).toFuture();
			await().atMost(Duration.ofSeconds(10)).until(() -> patient.held() == 1);
			waited = this.client.getNow("/patient/1?hold=1");
			assertThat(first).as("the first, still held").isNotDone();
		}
		finally {
			patient.release();
		}

		assertThat(waited.status()).isEqualTo(503);
		assertThat(waited.body()).contains("upstream saturated");
		assertThat(first.join().status()).isEqualTo(200);
		assertThat(patient.requests()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(rejected("patient")).isEqualTo(1));
	}

	@Test
	void aSaturatedUpstreamLeavesAnotherOnTheSameBackendSuccessful() {
		warmUp("hot", shared);
		warmUp("cool", shared);

		// 2 held until the test lets them go, 2 waiting for them, the rest rejected:
		// hot stays saturated as long as the test needs.
		Upstream upstream = ready("hot").upstream();
		AtomicInteger hotRejected = new AtomicInteger();
		AtomicInteger hotServed = new AtomicInteger();
		Disposable.Composite hot = Disposables.composite();
		try {
			hot.add(Flux.range(0, 8)
				.flatMap((i) -> sendHot(i), 8)
				.subscribe((answer) -> ((answer.status() == 503) ? hotRejected : hotServed).incrementAndGet()));
			// Eight at once may fill the queue one short: while two event loops race
			// for its last place, Reactor Netty's pool can turn a request away before
			// the other's place is handed a connection. One more request at each look
			// fills it, and any extra is turned away, as a saturated upstream should.
			await().atMost(Duration.ofSeconds(15)).until(() -> {
				Upstream.PoolCounts counts = upstream.counts();
				if (counts.active() == 2 && counts.pending() == 2) {
					return true;
				}
				hot.add(sendHot(8 + hot.size())
					.subscribe((answer) -> ((answer.status() == 503) ? hotRejected : hotServed).incrementAndGet()));
				return false;
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> hotRejected.get() >= 4);
			assertThat(this.client.getNow("/hot/probe").status()).as("hot is saturated").isEqualTo(503);

			for (int i = 0; i < 30; i++) {
				assertThat(this.client.getNow("/cool/" + i).status()).as("cool answers while hot is saturated")
					.isEqualTo(200);
			}

			assertThat(this.client.getNow("/hot/probe").status()).as("hot is still saturated").isEqualTo(503);
			assertThat(hotServed).as("no hot request got through").hasValue(0);
			assertThat(upstream.counts().active()).as("hot's connections, still held").isEqualTo(2);
		}
		finally {
			hot.dispose();
			shared.release();
		}
	}

	private Mono<GatewayClient.Answer> sendHot(int i) {
		return this.client.get("/hot/" + i + "?hold=1", Map.of());
	}

	/**
	 * Sends one request without a hold, so that the load balancer and the pool of the
	 * service exist before the measured requests, and waits until the backend has let go
	 * of it: the client can read the answer before the backend counts it done.
	 */
	private void warmUp(String service, TestBackend backend) {
		assertThat(this.client.getNow("/" + service + "/warm-up?delay=0").status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> backend.active() == 0);
	}

	/**
	 * Returns {@code gateway.lb.rejected{reason=saturated,service=<service>}} as
	 * Prometheus shows it, 0 when absent.
	 */
	private double rejected(String service) {
		double total = 0;
		for (String line : this.client.getNow("/actuator/prometheus").body().split("\n")) {
			if (line.startsWith("gateway_lb_rejected_total{") && line.contains("reason=\"saturated\"")
					&& line.contains("service=\"" + service + "\"")) {
				total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
			}
		}
		return total;
	}

}
