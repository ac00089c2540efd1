package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * upstreams.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UpstreamPoolIT extends GatewayIntegrationTest {

	/**
	 * Longest a rejection may take. The contract says at once (the issue: within 100 ms);
	 * the slack is for a loaded 2-core CI machine, and stays far below the 1 s that a
	 * request queued behind the cap would wait.
	 */
	static final long REJECTED_WITHIN_MILLIS = 250;

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

		List<Timed> answers = Flux.range(0, 12)
			.flatMap((i) -> timed(this.client.get("/capped/" + i + "?delay=1000", Map.of())), 12)
			.collectList()
			.block(Duration.ofSeconds(30));

		List<Timed> served = answers.stream().filter((timed) -> timed.answer().status() == 200).toList();
		List<Timed> rejected = answers.stream().filter((timed) -> timed.answer().status() == 503).toList();
		assertThat(served).as("2 connections + 3 pending: %s", answers).hasSize(5);
		assertThat(rejected).as("the other 7: %s", answers).hasSize(7);
		assertThat(rejected).allSatisfy((timed) -> {
			assertThat(timed.answer().body()).contains("upstream saturated");
			assertThat(timed.millis()).as("rejected at once, not after the 1 s hold")
				.isLessThan(REJECTED_WITHIN_MILLIS);
		});
		// The backend held each served request 1 s: they really queued behind the cap.
		assertThat(served).allSatisfy((timed) -> assertThat(timed.millis()).isGreaterThanOrEqualTo(900));
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

		List<Timed> answers = Flux.range(0, 2)
			.flatMap((i) -> timed(this.client.get("/patient/" + i + "?delay=1000", Map.of())), 2)
			.collectList()
			.block(Duration.ofSeconds(30));

		assertThat(answers).extracting((timed) -> timed.answer().status()).containsExactlyInAnyOrder(200, 503);
		Timed waited = answers.stream().filter((timed) -> timed.answer().status() == 503).findFirst().orElseThrow();
		assertThat(waited.answer().body()).contains("upstream saturated");
		assertThat(waited.millis()).as("rejected at the 300 ms pending timeout, not when the connection freed")
			.isBetween(250L, 900L);
		assertThat(patient.requests()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(rejected("patient")).isEqualTo(1));
	}

	@Test
	void aSaturatedUpstreamLeavesAnotherOnTheSameBackendFastAndSuccessful() {
		warmUp("hot", shared);
		warmUp("cool", shared);
		List<Long> baseline = coolLatencies(30);

		// 2 held for 10 s, 2 waiting for them, the rest rejected: hot stays
		// saturated until the client gives up on the held ones, after the measurement.
		Upstream upstream = ready("hot").upstream();
		AtomicInteger hotRejected = new AtomicInteger();
		AtomicInteger hotServed = new AtomicInteger();
		Disposable.Composite hot = Disposables.composite();
		hot.add(Flux.range(0, 8)
			.flatMap((i) -> sendHot(i), 8)
			.subscribe((answer) -> ((answer.status() == 503) ? hotRejected : hotServed).incrementAndGet()));
		try {
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

			List<Long> whileSaturated = coolLatencies(30);

			assertThat(this.client.getNow("/hot/probe").status()).as("hot is still saturated").isEqualTo(503);
			assertThat(hotServed).as("no hot request got through").hasValue(0);
			assertThat(whileSaturated).as("no cool request waited for hot's connections")
				.allSatisfy((millis) -> assertThat(millis).isLessThan(500));
			assertThat(median(whileSaturated)).as("median latency of cool, baseline %s ms", median(baseline))
				.isLessThanOrEqualTo(2 * median(baseline) + 20);
		}
		finally {
			hot.dispose();
		}
	}

	private Mono<GatewayClient.Answer> sendHot(int i) {
		return this.client.get("/hot/" + i + "?delay=10000", Map.of());
	}

	/**
	 * Returns the latencies of sequential requests to {@code cool}, each answered 200.
	 */
	private List<Long> coolLatencies(int requests) {
		List<Long> latencies = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			Timed timed = timed(this.client.get("/cool/" + i, Map.of())).block(Duration.ofSeconds(30));
			assertThat(timed.answer().status()).as("cool answers while hot is saturated").isEqualTo(200);
			latencies.add(timed.millis());
		}
		return latencies;
	}

	private static long median(List<Long> values) {
		return values.stream().sorted().toList().get(values.size() / 2);
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

	private static Mono<Timed> timed(Mono<GatewayClient.Answer> request) {
		return Mono.defer(() -> request).elapsed().map((timed) -> new Timed(timed.getT1(), timed.getT2()));
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

	record Timed(long millis, GatewayClient.Answer answer) {
	}

}
