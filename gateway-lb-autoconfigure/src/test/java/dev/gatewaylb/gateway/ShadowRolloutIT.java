package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A rollout's shadow stage ({@code rollout.shadow}) on real sockets: the target gets a
 * mirror of the split's traffic and no client request; a target whose answers differ is
 * rolled back from there, one whose answers match moves to its first step.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ShadowRolloutIT extends GatewayIntegrationTest {

	static final TestBackend stable = TestBackend.start("stable");

	static final TestBackend brokenCanary = TestBackend.start("broken-canary");

	static final TestBackend goodCanary = TestBackend.start("good-canary");

	@Autowired
	SplitRollouts rollouts;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		brokenCanary.failEvery(1);
		TestGateway gateway = TestGateway.properties(registry)
			.instances("stable", List.of(stable))
			.instances("broken-canary", List.of(brokenCanary))
			.instances("good-canary", List.of(goodCanary))
			// The test's requests come from 25 clients, through a proxy at loopback: the
			// stage needs min-clients (20) of them.
			.set("gateway.lb.trusted-proxies", "127.0.0.1/32");
		for (String split : List.of("broken", "good")) {
			String prefix = "gateway.lb.splits." + split + ".";
			gateway.route(split)
				.set(prefix + "targets.stable", 100)
				.set(prefix + "targets." + split + "-canary", 0)
				.set(prefix + "rollout.target", split + "-canary")
				.set(prefix + "rollout.shadow", true)
				.set(prefix + "rollout.steps", "10,100")
				.set(prefix + "rollout.min-requests", 50);
		}
	}

	@AfterAll
	static void stopBackends() {
		List.of(stable, brokenCanary, goodCanary).forEach(TestBackend::close);
	}

	@Test
	void aTargetWhoseMirroredAnswersDifferIsRolledBackBeforeAnyClientReachesIt() {
		assertThat(status("broken").state()).isEqualTo(Rollout.State.SHADOWING);
		AtomicInteger sent = new AtomicInteger();
		// Requests until the stage has judged: 50 compared answers at least.
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).until(() -> {
			GatewayClient.Answer answer = get("/broken/", sent.incrementAndGet());
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.backend()).as("request %d", sent.get()).isEqualTo("stable");
			return status("broken").state() == Rollout.State.ROLLED_BACK;
		});
		assertThat(sent.get()).isGreaterThanOrEqualTo(50);
		String reason = status("broken").reason();
		assertThat(reason).startsWith("mismatch rate 1.0000 of ");
		// 25 clients, counted in 4,096 slots chosen with a seed of the process: two of
		// them
		// share a slot, and count as one, about once in fifteen runs (RolloutWindow).
		java.util.regex.Matcher clients = java.util.regex.Pattern
			.compile("compared answers from (\\d+) clients in the shadow stage")
			.matcher(reason);
		assertThat(clients.find()).as(reason).isTrue();
		assertThat(Integer.parseInt(clients.group(1))).as(reason).isBetween(20, 25);
		// Mirrors of the last requests may still be on their way: counted once answered.
		await().atMost(Duration.ofSeconds(5)).until(() -> inFlight("broken-canary") == 0);
		int mirrored = brokenCanary.requests();
		assertThat(mirrored).as("mirrored requests only").isBetween(50, sent.get());
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/broken/").backend()).isEqualTo("stable");
		}
		assertThat(brokenCanary.requests()).as("no mirror once rolled back").isEqualTo(mirrored);
	}

	@Test
	void aTargetWhoseMirroredAnswersMatchMovesToItsFirstStep() {
		assertThat(status("good").state()).isEqualTo(Rollout.State.SHADOWING);
		AtomicInteger sent = new AtomicInteger();
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).until(() -> {
			String backend = get("/good/", sent.incrementAndGet()).backend();
			Rollout.State state = status("good").state();
			// The stage is judged when a mirrored answer arrives, which may be
			// after the primary's answer reached us: the next request may then be
			// split to the target. A client request the target answers is a bug
			// only if the stage had not judged by the time that answer arrived
			// (states only move forward).
			if (!"stable".equals(backend)) {
				assertThat(state).as("the state when %s answered", backend).isEqualTo(Rollout.State.PROGRESSING);
			}
			return state == Rollout.State.PROGRESSING;
		});
		assertThat(status("good").percent()).isEqualTo(10);
		int canary = 0;
		for (int i = 0; i < 400; i++) {
			canary += "good-canary".equals(this.client.getNow("/good/").backend()) ? 1 : 0;
		}
		// 10% of 400, give or take five standard deviations (6).
		assertThat(canary).isBetween(10, 70);
	}

	/**
	 * Sends request {@code number} as one of 25 clients in turn.
	 */
	private GatewayClient.Answer get(String path, int number) {
		return this.client.getNow(path, java.util.Map.of("X-Forwarded-For", "10.77.0." + (1 + number % 25)));
	}

	private Rollout.Status status(String split) {
		RolloutTrack track = this.rollouts.track(split);
		assertThat(track).as("rollout of %s", split).isNotNull();
		return track.status();
	}

}
