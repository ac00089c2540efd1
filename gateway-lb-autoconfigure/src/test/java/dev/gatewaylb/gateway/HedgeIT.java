package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;

import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.hedging.core.Hedging;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Hedged requests ({@code hedge.max-extra-load}) through a real gateway to real backends
 * on loopback: backups answer for first attempts that never come back, for a few percent
 * more requests, never go out for a request that may not be sent twice, stay within their
 * budget when everything is slow, and the attempt that loses is cancelled at its backend
 * and charged nothing. How much of the tail backups cut is a target of the load
 * benchmarks ({@code run.sh tail}, docs/benchmarks.md).
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class HedgeIT extends GatewayIntegrationTest {

	static final int CLIENTS = 16;

	static final List<TestBackend> sporadic = List.of(TestBackend.start("sporadic-1"), TestBackend.start("sporadic-2"),
			TestBackend.start("sporadic-3"));

	static final List<TestBackend> unhedged = List.of(TestBackend.start("unhedged-1"), TestBackend.start("unhedged-2"),
			TestBackend.start("unhedged-3"));

	static final List<TestBackend> writes = List.of(TestBackend.start("writes-1"), TestBackend.start("writes-2"),
			TestBackend.start("writes-3"));

	static final List<TestBackend> budget = List.of(TestBackend.start("budget-1"), TestBackend.start("budget-2"),
			TestBackend.start("budget-3"));

	static final List<TestBackend> loser = List.of(TestBackend.start("loser-slow"), TestBackend.start("loser-fast"));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		gateway.set("management.endpoints.web.exposure.include", "gatewaylb,prometheus");
		gateway.route("sporadic")
			.instances("sporadic", sporadic)
			.set("gateway.lb.services.sporadic.algorithm", "least-requests")
			.set("gateway.lb.services.sporadic.hedge.max-extra-load", 0.05);
		gateway.route("unhedged")
			.instances("unhedged", unhedged)
			.set("gateway.lb.services.unhedged.algorithm", "least-requests");
		gateway.route("writes")
			.instances("writes", writes)
			.set("gateway.lb.services.writes.hedge.max-extra-load", 1)
			.set("gateway.lb.services.writes.hedge.min-delay", "5ms");
		gateway.route("deletes")
			.instances("deletes", writes)
			.set("gateway.lb.services.deletes.hedge.max-extra-load", 1)
			.set("gateway.lb.services.deletes.hedge.min-delay", "5ms")
			.set("gateway.lb.services.deletes.hedge.methods", "get, DELETE");
		gateway.route("budget")
			.instances("budget", budget)
			.set("gateway.lb.services.budget.algorithm", "least-requests")
			.set("gateway.lb.services.budget.hedge.max-extra-load", 0.05);
		gateway.route("loser")
			.instances("loser", loser)
			.set("gateway.lb.services.loser.hedge.max-extra-load", 1)
			.set("gateway.lb.services.loser.hedge.min-delay", "500ms");
	}

	@AfterAll
	static void stopBackends() {
		List.of(sporadic, unhedged, writes, budget, loser).forEach((backends) -> backends.forEach(TestBackend::close));
	}

	@Test
	void backupsAnswerForSlowFirstAttemptsForAFewPercentMoreRequests() {
		HedgeState counters = ready("sporadic").feature(HedgeState.class);
		double extraLoad;
		long requests;
		try (ClientLoad load = new ClientLoad(this.client, "/sporadic/", CLIENTS)) {
			// The window learns the latency of 5 ms answers first.
			awaitHedgeDelay("sporadic");
			load.await(200);
			// Then 3% of the backends' answers, a seeded draw, never come until the test
			// lets them go: such a request is answered only by its backup. A client
			// whose request the budget left without one waits until the end; the other
			// clients go on.
			for (int i = 0; i < sporadic.size(); i++) {
				sporadic.get(i).holdWhen(sporadicHolds(1000 + i));
			}
			sporadic.forEach(TestBackend::reset);
			long before = load.served();
			load.await(1200);
			extraLoad = (double) requests(sporadic) / (load.served() - before);
			// Every request sent so far: those answered, and at most one per client not.
			requests = load.served() + CLIENTS;
			assertThat(load.failures()).as("client-visible errors: %s", load.failureCauses()).isZero();
		}
		finally {
			sporadic.forEach(TestBackend::release);
			sporadic.forEach((backend) -> backend.holdWhen(null));
		}
		System.out.printf("hedge figures: extra load %.3f; sent %d won %d lost %d budget %d%n", extraLoad,
				counters.sent().sum(), counters.won().sum(), counters.lost().sum(), counters.refusedByBudget().sum());
		assertThat((double) counters.sent().sum()).as("backups against %d requests", requests)
			.isLessThanOrEqualTo(0.05 * requests + 1);
		assertThat(counters.sent().sum()).isPositive();
		assertThat(counters.won().sum()).as("backups that answered before a held first attempt").isPositive();
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(counters.won().sum() + counters.lost().sum())
				.as("every backup sent is won or lost")
				.isEqualTo(counters.sent().sum()));
		assertThat(metric("gateway_lb_hedges_total{outcome=\"sent\",service=\"sporadic\"}"))
			.isEqualTo(counters.sent().sum());
		assertThat(metric("gateway_lb_hedges_total{outcome=\"won\",service=\"sporadic\"}"))
			.isEqualTo(counters.won().sum());
		String report = this.client.getNow("/actuator/gatewaylb/sporadic").body();
		assertThat(report)
			.containsPattern("\"hedge\":\\{\"maxExtraLoad\":0.05,\"minDelayMillis\":5.0,\"delayMillis\":[0-9.]+,");
		assertThat(this.client.getNow("/actuator/gatewaylb/unhedged").body()).contains("\"hedge\":null");
	}

	@Test
	void requestsThatMayNotBeSentTwiceNeverAre() {
		writes.forEach((backend) -> backend.delay(Duration.ofMillis(10)));
		// Hedging everything after 5 ms, once the window knows the latency.
		awaitHedgingEverything("writes");
		writes.forEach(TestBackend::reset);
		for (int i = 0; i < 10; i++) {
			assertThat(this.client.send("POST", "/writes/", "{\"order\":" + i + "}").status()).isEqualTo(200);
			assertThat(this.client.send("PATCH", "/writes/", null).status()).isEqualTo(200);
			assertThat(this.client.send("PUT", "/writes/", "{\"order\":" + i + "}").status()).isEqualTo(200);
			assertThat(this.client.send("PUT", "/writes/", null).status()).isEqualTo(200);
			assertThat(this.client.send("DELETE", "/writes/", null).status()).isEqualTo(200);
		}
		// A GET whose first attempt waits 500 ms, fifty times what the window learnt: its
		// backup goes out long before.
		assertThat(this.client.getNow("/writes/?delay=500").status()).isEqualTo(200);
		assertThat(writes.stream().mapToInt((backend) -> backend.requests("DELETE")).sum())
			.as("DELETEs: not among hedge.methods by default")
			.isEqualTo(10);
		assertThat(writes.stream().mapToInt((backend) -> backend.requests("POST")).sum()).as("POSTs with a body")
			.isEqualTo(10);
		assertThat(writes.stream().mapToInt((backend) -> backend.requests("PATCH")).sum()).as("PATCH, not idempotent")
			.isEqualTo(10);
		assertThat(writes.stream().mapToInt((backend) -> backend.requests("PUT")).sum())
			.as("PUTs, with a body and without: not among hedge.methods by default")
			.isEqualTo(20);
		assertThat(writes.stream().mapToInt((backend) -> backend.requests("GET")).sum())
			.as("a GET of the same service does get a backup")
			.isEqualTo(2);
	}

	@Test
	void backupsStayWithinTheBudgetWhenEveryAnswerTurnsSlow() {
		budget.forEach((backend) -> backend.delay(Duration.ofMillis(5)));
		HedgeState counters = ready("budget").feature(HedgeState.class);
		// Just enough answers for the window to know the latency (it needs 200 at
		// max-extra-load 0.05): the budget then has room for a few backups, 5% of them.
		int warmUp = 220;
		for (int i = 0; i < warmUp; i++) {
			assertThat(this.client.getNow("/budget/").status()).isEqualTo(200);
		}
		awaitHedgeDelay("budget");
		long sentBefore = counters.sent().sum();
		long refusedBefore = counters.refusedByBudget().sum();
		// Now no answer comes until the test says so: every attempt outlives the delay,
		// and only the budget holds the backups back.
		budget.forEach(TestBackend::hold);
		try (ClientLoad load = new ClientLoad(this.client, "/budget/", CLIENTS)) {
			// Each client's request, held, has its backup sent or refused once.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> counters.sent().sum() - sentBefore + counters.refusedByBudget().sum()
						- refusedBefore >= CLIENTS);
			long sent = counters.sent().sum() - sentBefore;
			long refused = counters.refusedByBudget().sum() - refusedBefore;
			long requests = warmUp + CLIENTS;
			System.out.printf("budget figures: sent %d, refused %d, requests %d%n", sent, refused, requests);
			assertThat(refused).as("backups the budget refused").isPositive();
			assertThat((double) counters.sent().sum()).as("backups (%d while held) against %d requests", sent, requests)
				.isLessThanOrEqualTo(0.05 * requests + 1);
			assertThat(load.served()).as("answers while held").isZero();
		}
		finally {
			budget.forEach(TestBackend::release);
		}
	}

	@Test
	void theLoserIsCancelledAtItsBackendAndChargedNothing() {
		TestBackend slow = loser.get(0);
		TestBackend fast = loser.get(1);
		// Backups after 500 ms: a 5 ms answer never waits that long, so no backup goes
		// to the slow endpoint, which holds every request once the window knows the
		// latency; every attempt there is answered by its backup.
		fast.delay(Duration.ofMillis(5));
		slow.delay(Duration.ofMillis(5));
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			Flux.range(0, 8).flatMap((i) -> this.client.get("/loser/", java.util.Map.of())).blockLast();
			return hedging("loser").delayNanos() >= 0;
		});
		await().until(() -> slow.active() == 0 && fast.active() == 0);
		loser.forEach(TestBackend::reset);
		HedgeState counters = ready("loser").feature(HedgeState.class);
		long wonBefore = counters.won().sum();
		slow.hold();
		try {
			for (int i = 0; i < 10; i++) {
				GatewayClient.Answer answer = this.client.getNow("/loser/");
				assertThat(answer.status()).isEqualTo(200);
				assertThat(answer.backend()).as("request %d", i).isEqualTo("loser-fast");
			}
			// Round-robin sent every other first attempt to the slow endpoint; each got a
			// backup on the fast one after 500 ms, which won.
			assertThat(slow.requests()).isEqualTo(5);
			assertThat(counters.won().sum() - wonBefore).isEqualTo(5);
			await().atMost(Duration.ofSeconds(5)).until(() -> slow.cancelled() == 5);
			assertThat(slow.held()).isZero();
		}
		finally {
			slow.release();
		}
		await().untilAsserted(() -> assertThat(inFlight("loser")).isZero());
		String slowAddress = "127.0.0.1:" + slow.port();
		assertThat(state("loser", slowAddress).isEjected(this.runtimes.nanoTime()))
			.as("five cancellations, and consecutive-failures is 5: charged nothing")
			.isFalse();
		assertThat(state("loser", slowAddress).consecutiveFailures()).isZero();
	}

	/**
	 * Holds 3% of the requests, a seeded draw.
	 */
	private static BooleanSupplier sporadicHolds(long seed) {
		Random random = new Random(seed);
		return () -> random.nextInt(100) < 3;
	}

	@Test
	void theMethodsAServiceListsAreHedgedAndOnlyThose() {
		writes.forEach((backend) -> backend.delay(Duration.ofMillis(10)));
		awaitHedgingEverything("deletes");
		writes.forEach(TestBackend::reset);
		for (int i = 0; i < 10; i++) {
			assertThat(this.client.send("PUT", "/deletes/", null).status()).isEqualTo(200);
		}
		// A DELETE whose first attempt waits 500 ms, fifty times what the window learnt.
		assertThat(this.client.send("DELETE", "/deletes/?delay=500", null).status()).isEqualTo(200);
		assertThat(writes.stream().mapToInt((backend) -> backend.requests("DELETE")).sum())
			.as("a DELETE, listed in hedge.methods, and its backup")
			.isEqualTo(2);
		assertThat(writes.stream().mapToInt((backend) -> backend.requests("PUT")).sum()).as("PUTs, not listed")
			.isEqualTo(10);
	}

	private void awaitHedgingEverything(String service) {
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			Flux.range(0, 8).flatMap((i) -> this.client.get("/" + service + "/", java.util.Map.of())).blockLast();
			return hedging(service).delayNanos() >= 0;
		});
	}

	private Hedging hedging(String service) {
		ServiceRuntime runtime = ready(service);
		assertThat(runtime.feature(HedgeState.class).hedging()).as("hedging of %s", service).isNotNull();
		return runtime.feature(HedgeState.class).hedging();
	}

	private void awaitHedgeDelay(String service) {
		await().atMost(Duration.ofSeconds(30)).until(() -> hedging(service).delayNanos() >= 0);
	}

	private static int requests(List<TestBackend> backends) {
		return backends.stream().mapToInt(TestBackend::requests).sum();
	}

}
