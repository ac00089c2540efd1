package dev.gatewaylb.gateway;

import dev.gatewaylb.internal.discovery.Member;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A burst of 2000 concurrent requests, a quarter of them abandoned by the client while
 * the backend holds them: every in-flight count returns to 0, which Spring Cloud
 * LoadBalancer's own lifecycle would not do for the abandoned ones.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class InFlightIT {

	static final int REQUESTS = 2_000;

	static final List<TestBackend> backends = List.of(TestBackend.start("a"), TestBackend.start("b"),
			TestBackend.start("c"));

	static {
		backends.forEach((backend) -> backend.delay(Duration.ofMillis(300)));
	}

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("burst")
			.instances("burst", backends)
			.set("gateway.lb.services.burst.algorithm", "least-requests")
			// CI on 2 cores once answered a request of the burst 503 with the pool's
			// defaults (256 connections and 256 waiting for at most 5 s, per endpoint):
			// this test is about in-flight accounting, not saturation, so the pending
			// queue holds the whole burst for as long as it takes.
			.set("gateway.lb.services.burst.pool.max-pending", REQUESTS)
			.set("gateway.lb.services.burst.pool.pending-timeout", "0s");
	}

	@LocalServerPort
	int port;

	@Autowired
	ServiceRuntimes runtimes;

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
	}

	@Test
	void everyInFlightCountReturnsToZeroAfterABurstWithCancellations() {
		AtomicInteger completed = new AtomicInteger();
		AtomicInteger cancelled = new AtomicInteger();
		AtomicInteger inFlightAtCancel = new AtomicInteger();
		// Abandoned requests ask the backend to hold them; the client gives up on them
		// only once every request of the burst has reached a backend, so each one is
		// cancelled while picked and in flight.
		Mono<Void> everyRequestReachedABackend = Flux.interval(Duration.ofMillis(20))
			.filter((tick) -> backends.stream().mapToInt(TestBackend::requests).sum() >= REQUESTS)
			.next()
			.doOnNext((tick) -> inFlightAtCancel.set(totalInFlight()))
			.then()
			.cache();
		try (GatewayClient client = new GatewayClient(this.port)) {
			Flux.range(0, REQUESTS).flatMap((i) -> {
				if (i % 4 == 0) {
					return client.get("/burst/" + i + "?delay=120000", Map.of())
						.doOnCancel(cancelled::incrementAndGet)
						.takeUntilOther(everyRequestReachedABackend)
						.then(Mono.empty());
				}
				return client.get("/burst/" + i, Map.of()).doOnNext((answer) -> {
					assertThat(answer.status()).as(answer.body()).isEqualTo(200);
					completed.incrementAndGet();
				});
			}, REQUESTS).then().block(Duration.ofSeconds(120));
		}
		assertThat(cancelled).hasValue(REQUESTS / 4);
		assertThat(completed).hasValue(REQUESTS - REQUESTS / 4);
		assertThat(inFlightAtCancel.get()).as("in flight when the clients gave up")
			.isGreaterThanOrEqualTo(REQUESTS / 4);
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(totalInFlight()).isZero());
		Snapshot<Member> snapshot = this.runtimes.snapshot("burst");
		long picks = 0;
		for (int i = 0; i < snapshot.size(); i++) {
			picks += snapshot.state(i).picks();
		}
		assertThat(picks).isEqualTo(REQUESTS);
	}

	private int totalInFlight() {
		Snapshot<Member> snapshot = this.runtimes.snapshot("burst");
		int total = 0;
		for (int i = 0; (snapshot != null) && i < snapshot.size(); i++) {
			total += snapshot.state(i).inFlight();
		}
		return total;
	}

}
