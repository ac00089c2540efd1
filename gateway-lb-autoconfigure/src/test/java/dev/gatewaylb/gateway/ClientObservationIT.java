package dev.gatewaylb.gateway;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.runtime.ServiceCounters;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every attempt's {@code http.client.requests} observation is stopped, also when the
 * attempt never gets its headers: Spring Cloud Gateway's request header filter starts one
 * for each attempt the routing filter sends, and only the answer's header filter or an
 * error reaching the gateway's exception handler stops it; an attempt that fails before
 * its headers and is answered by gateway-lb (a retry, a 502), a hedged race's loser and
 * an attempt whose client left reach neither.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ClientObservationIT extends GatewayIntegrationTest {

	static final TestBackend slow = TestBackend.start("slow");

	static final TestBackend fast = TestBackend.start("fast");

	static final TestBackend silent = TestBackend.start("silent");

	static final TestBackend stormy = TestBackend.start("stormy");

	static final int closed = closedPort();

	@Autowired
	MeterRegistry meters;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		gateway.route("refused")
			.uris("refused", List.of("http://127.0.0.1:" + closed))
			.set("gateway.lb.services.refused.retry.attempts", 0)
			.set("gateway.lb.services.refused.health.passive.consecutive-failures", 100_000);
		gateway.route("retried")
			.uris("retried", List.of("http://127.0.0.1:" + closed, "http://127.0.0.1:" + fast.port()))
			.set("gateway.lb.services.retried.algorithm", "round-robin")
			.set("gateway.lb.services.retried.retry.budget-min-per-second", 1_000)
			.set("gateway.lb.services.retried.health.passive.consecutive-failures", 100_000);
		gateway.route("hedged")
			.instances("hedged", List.of(slow, fast))
			.set("gateway.lb.services.hedged.algorithm", "round-robin")
			.set("gateway.lb.services.hedged.hedge.max-extra-load", 1)
			.set("gateway.lb.services.hedged.hedge.min-delay", "5ms");
		gateway.route("gone").instances("gone", List.of(silent));
		gateway.route("storm").instances("storm", List.of(stormy));
	}

	@AfterAll
	static void stopBackends() {
		List.of(slow, fast, silent, stormy).forEach(TestBackend::close);
	}

	@Test
	void anAttemptThatFailsBeforeItsHeadersHasItsObservationStopped() {
		Counts before = counts();
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/refused/").status()).isGreaterThanOrEqualTo(500);
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> inFlight("refused") == 0);
		assertThat(counts().since(before)).isEqualTo(new Counts(0, 20));
		ServiceCounters retried = ready("retried").counters();
		long retriesBefore = retried.retried().sum();
		before = counts();
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/retried/").status()).isEqualTo(200);
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> inFlight("retried") == 0);
		long retries = retried.retried().sum() - retriesBefore;
		assertThat(retries).as("attempts refused, then retried").isPositive();
		assertThat(counts().since(before)).isEqualTo(new Counts(0, 20 + retries));
		assertThat(activeAttempts()).as("gateway.lb.attempt observations running").isZero();
	}

	@Test
	void aHedgedRacesLoserHasItsObservationStopped() {
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			Flux.range(0, 8).flatMap((i) -> this.client.get("/hedged/", Map.of())).blockLast();
			return ready("hedged").feature(HedgeState.class).hedging().delayNanos() >= 0;
		});
		// Every other first attempt goes to the slow endpoint, whose answer never comes
		// before its backup's.
		slow.delay(Duration.ofSeconds(3));
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("hedged") == 0);
			HedgeState counters = ready("hedged").feature(HedgeState.class);
			long wonBefore = counters.won().sum();
			long sentBefore = counters.sent().sum();
			Counts before = counts();
			for (int i = 0; i < 20; i++) {
				assertThat(this.client.getNow("/hedged/").backend()).isEqualTo("fast");
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("hedged") == 0);
			assertThat(counters.won().sum() - wonBefore).as("backups that won").isPositive();
			long sent = counters.sent().sum() - sentBefore;
			assertThat(counts().since(before)).isEqualTo(new Counts(0, 20 + sent));
			assertThat(activeAttempts()).as("gateway.lb.attempt observations running").isZero();
		}
		finally {
			slow.delay(Duration.ZERO);
		}
	}

	@Test
	void anAttemptWhoseClientLeftBeforeItsHeadersHasItsObservationStopped() {
		silent.delay(Duration.ofSeconds(30));
		try {
			Counts before = counts();
			for (int i = 0; i < 10; i++) {
				Disposable request = this.client.get("/gone/", Map.of()).subscribe();
				int seen = i;
				// At the endpoint, which has not answered: then the client leaves.
				await().atMost(Duration.ofSeconds(5)).until(() -> silent.requests() == seen + 1);
				request.dispose();
				await().atMost(Duration.ofSeconds(5)).until(() -> inFlight("gone") == 0);
			}
			assertThat(counts().since(before)).isEqualTo(new Counts(0, 10));
			assertThat(activeAttempts()).as("gateway.lb.attempt observations running").isZero();
		}
		finally {
			silent.delay(Duration.ZERO);
		}
	}

	@Test
	void aStormOfClientsThatHangUpLeavesNoObservationRunning() {
		stormy.delay(Duration.ofSeconds(30));
		try {
			Counts before = counts();
			long attemptsBefore = attempts("cancelled");
			int seen = stormy.requests();
			List<Disposable> requests = new java.util.ArrayList<>();
			for (int i = 0; i < 32; i++) {
				requests.add(this.client.get("/storm/", Map.of()).subscribe());
			}
			// Every request at the endpoint, none answered: then every client hangs up.
			await().atMost(Duration.ofSeconds(10)).until(() -> stormy.requests() == seen + 32);
			requests.forEach(Disposable::dispose);
			await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("storm") == 0);
			await().atMost(Duration.ofSeconds(5)).until(() -> counts().since(before).equals(new Counts(0, 32)));
			assertThat(activeAttempts()).as("gateway.lb.attempt observations running").isZero();
			assertThat(attempts("cancelled") - attemptsBefore).isEqualTo(32);
		}
		finally {
			stormy.delay(Duration.ZERO);
		}
	}

	/**
	 * Returns how many {@code gateway.lb.attempt} observations are running.
	 */
	private long activeAttempts() {
		return this.meters.find("gateway.lb.attempt.active")
			.longTaskTimers()
			.stream()
			.mapToLong(LongTaskTimer::activeTasks)
			.sum();
	}

	/**
	 * Returns how many {@code gateway.lb.attempt} observations stopped with an outcome.
	 */
	private long attempts(String outcome) {
		return this.meters.find("gateway.lb.attempt")
			.tag("gateway.lb.outcome", outcome)
			.timers()
			.stream()
			.mapToLong(Timer::count)
			.sum();
	}

	private Counts counts() {
		return new Counts(this.meters.find("http.client.requests.active")
			.longTaskTimers()
			.stream()
			.mapToLong(LongTaskTimer::activeTasks)
			.sum(), this.meters.find("http.client.requests").timers().stream().mapToLong(Timer::count).sum());
	}

	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The {@code http.client.requests} observations still running, and those stopped.
	 */
	record Counts(long active, long stopped) {

		Counts since(Counts before) {
			return new Counts(this.active - before.active, this.stopped - before.stopped);
		}

	}

}
