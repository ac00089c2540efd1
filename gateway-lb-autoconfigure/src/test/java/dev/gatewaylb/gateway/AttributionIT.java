package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;

import dev.gatewaylb.internal.balance.EndpointState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Each row of the attribution table (docs/health.md), over real sockets: an endpoint is
 * charged for what it did, nobody for what the client or the gateway did, and
 * {@code timeouts.response} bounds the client's whole wait: one deadline for the
 * exchange, retries included.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AttributionIT extends GatewayIntegrationTest {

	static final TestBackend staller = TestBackend.start("staller");

	static final TestBackend streamer = TestBackend.start("streamer");

	/**
	 * Answers 503 after 1.5 s, three quarters of the deadline; started before
	 * {@link #slow}, so it is listed first.
	 */
	static final HealthBackend unavailable = HealthBackend.start("unavailable");

	static final TestBackend slow = TestBackend.start("slow");

	static final HealthBackend flaky = HealthBackend.start("flaky");

	static {
		unavailable.status(503);
		unavailable.delay(Duration.ofMillis(1_500));
	}

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			// A body that always stalls past body-idle: every attempt is a failure.
			.route("stalling")
			.instances("stalling", List.of(staller))
			.set("gateway.lb.services.stalling.timeouts.body-idle", "500ms")
			.set("gateway.lb.services.stalling.health.passive.consecutive-failures", 3)
			.set("gateway.lb.services.stalling.retry.attempts", 0)
			// One failure would eject: a client that hangs up must charge nothing.
			.route("download")
			.instances("download", List.of(streamer))
			.set("gateway.lb.services.download.health.passive.consecutive-failures", 1)
			// An endpoint that answers 503 after 1.5 s and a slow one, a 2 s deadline
			// for both.
			.route("deadline")
			.uris("deadline", List.of(unavailable.uri(), slow.uri()))
			.set("gateway.lb.services.deadline.timeouts.response", "2s")
			.set("gateway.lb.services.deadline.retry.attempts", 2)
			.set("gateway.lb.services.deadline.retry.on-statuses", "503")
			// Answers without a body end a failure streak like any other answer.
			.route("bodiless")
			.uris("bodiless", List.of(flaky.uri()))
			.set("gateway.lb.services.bodiless.retry.attempts", 0)
			.set("gateway.lb.services.bodiless.health.passive.consecutive-failures", 5)
			.route("late")
			.instances("late", List.of(slow))
			.set("gateway.lb.services.late.timeouts.response", "500ms")
			.set("gateway.lb.services.late.retry.attempts", 2)
			.set("gateway.lb.services.late.retry.on-statuses", "502,503,504");
	}

	@AfterAll
	static void stopBackends() {
		List.of(staller, streamer, slow).forEach(TestBackend::close);
		unavailable.kill();
		flaky.kill();
	}

	@Test
	void aBodyThatStallsEveryTimeEjectsItsEndpointAfterConsecutiveFailures() {
		// A first request warms the path up: on a cold, busy JVM the idle timer could
		// fire before the gateway sent its own headers.
		assertThat(this.client.getNow("/stalling/warm-up").status()).isEqualTo(200);
		for (int i = 1; i <= 3; i++) {
			GatewayClient.Transfer transfer = this.client.receive("/stalling/?stall=2000");
			assertThat(transfer.status()).as("the headers went out").isEqualTo(200);
			assertThat(transfer.error()).as("the body was cut").isNotNull();
			int attempt = i;
			if (i < 3) {
				// The streak grows 1, 2: the headers are not a success, the cut is a
				// failure.
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(state("stalling").consecutiveFailures()).as("after %d", attempt)
						.isEqualTo(attempt));
			}
		}
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(state("stalling").ejections()).isEqualTo(1));
	}

	@Test
	void aClientThatHangsUpMidDownloadChargesTheEndpointNothing() {
		for (int i = 0; i < 5; i++) {
			List<String> chunks = this.client.stream("/download/?chunks=40&gap=50")
				.take(2)
				.collectList()
				.block(Duration.ofSeconds(10));
			assertThat(chunks).hasSize(2);
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("download") == 0);
		EndpointState state = state("download");
		assertThat(state.consecutiveFailures()).isZero();
		assertThat(state.ejections()).isZero();
		assertThat(state.isEjected(this.runtimes.nanoTime())).isFalse();
		// And the endpoint still serves whole bodies.
		assertThat(this.client.stream("/download/?chunks=3&gap=10").collectList().block(Duration.ofSeconds(10)))
			.hasSize(3);
	}

	@Test
	void answers504AtTheDeadlineAcrossARetryAndNeverRetriesTheTimedOutAttempt() {
		// Round-robin over the two: the warm-up's attempt and retry take one ticket
		// each, so the request below goes to the 503 endpoint first, then to the slow
		// one.
		assertThat(this.client.getNow("/deadline/warm-up?delay=0").status()).isEqualTo(200);
		int unavailableBefore = unavailable.requests();
		int slowBefore = slow.requests();
		int cancelledBefore = slow.cancelled();

		// The 503 comes after 1.5 s of the 2 s deadline; the slow endpoint answers 1.9 s
		// after the retry reaches it, within a deadline of its own but not within what
		// is left of the request's: one deadline for the whole exchange answers 504, a
		// deadline per attempt would answer its 200.
		GatewayClient.Answer answer = this.client.getNow("/deadline/late?delay=1900");

		assertThat(answer.status()).isEqualTo(504);
		assertThat(unavailable.requests() - unavailableBefore).as("the 503 endpoint saw the request once").isEqualTo(1);
		assertThat(slow.requests() - slowBefore).as("the slow endpoint saw the request once, not again").isEqualTo(1);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(slow.cancelled() - cancelledBefore)
				.as("the slow endpoint's request, given up at the deadline")
				.isEqualTo(1));
	}

	@Test
	void answers504AtTheDeadlineWhenTheOnlyEndpointIsLateEvenWhen504IsRetried() {
		this.client.getNow("/late/warm-up?delay=0");
		int before = slow.requests();
		int cancelledBefore = slow.cancelled();

		try {
			// Held until the gateway lets it go: only the deadline answers.
			GatewayClient.Answer answer = this.client.getNow("/late/x?hold=1");
			assertThat(answer.status()).isEqualTo(504);
			assertThat(slow.requests() - before).as("one deadline, not one per attempt: sent once").isEqualTo(1);
			// Released only once the gateway closed it: a release before could let the
			// backend answer the held request before it saw the close (a fresh-clone
			// .ci/run did so once).
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(slow.cancelled() - cancelledBefore).isEqualTo(1));
		}
		finally {
			slow.release();
		}
	}

	@Test
	void anAnswerWithoutABodyEndsTheFailureStreak() {
		flaky.status(503);
		assertThat(this.client.getNow("/bodiless/").status()).isEqualTo(503);
		assertThat(this.client.getNow("/bodiless/").status()).isEqualTo(503);
		await().atMost(Duration.ofSeconds(5)).until(() -> state("bodiless").consecutiveFailures() == 2);
		flaky.status(200);
		assertThat(this.client.send("HEAD", "/bodiless/", null).status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> state("bodiless").consecutiveFailures() == 0);
		flaky.status(503);
		this.client.getNow("/bodiless/");
		flaky.status(204);
		assertThat(this.client.getNow("/bodiless/").status()).isEqualTo(204);
		await().atMost(Duration.ofSeconds(5)).until(() -> state("bodiless").consecutiveFailures() == 0);
	}

}
