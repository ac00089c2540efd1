package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.rollout.RolloutAction;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.rollout.Verdict;
import dev.gatewaylb.internal.rollout.VerdictKind;
import dev.gatewaylb.internal.split.Split;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Progressive rollouts judged on real traffic: a healthy canary ramps to promotion, a
 * failing one is rolled back at its first judgement, a step without enough canary
 * requests holds, operators pause, resume, promote and roll back, sticky clients move
 * only when a step moves their key, and one client can steer a rollout neither way.
 * <p>
 * The gateway trusts loopback as a proxy, so that the load's requests come from
 * {@value #CLIENTS} clients ({@code X-Forwarded-For}), enough for the default
 * {@code min-clients}.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RolloutIT extends GatewayIntegrationTest {

	static final List<TestBackend> rampStable = List.of(TestBackend.start("ramp-stable-1"),
			TestBackend.start("ramp-stable-2"));

	static final List<TestBackend> rampCanary = List.of(TestBackend.start("ramp-canary"));

	static final List<TestBackend> failStable = List.of(TestBackend.start("fail-stable"));

	static final HealthBackend failCanary = HealthBackend.start("fail-canary");

	static final List<TestBackend> slowStable = List.of(TestBackend.start("slow-stable"));

	static final List<TestBackend> slowCanary = List.of(TestBackend.start("slow-canary"));

	static final List<TestBackend> holdStable = List.of(TestBackend.start("hold-stable"));

	static final List<TestBackend> holdCanary = List.of(TestBackend.start("hold-canary"));

	static final List<TestBackend> stickyStable = List.of(TestBackend.start("sticky-stable-1"),
			TestBackend.start("sticky-stable-2"));

	static final List<TestBackend> stickyCanary = List.of(TestBackend.start("sticky-canary"));

	static final List<TestBackend> emptyStable = List.of(TestBackend.start("empty-stable"));

	static final List<TestBackend> fullStable = List.of(TestBackend.start("full-stable"));

	static final List<TestBackend> fullCanary = List.of(TestBackend.start("full-canary"));

	static final List<TestBackend> shedStable = List.of(TestBackend.start("shed-stable"));

	static final List<TestBackend> shedCanary = List.of(TestBackend.start("shed-canary"));

	static final List<TestBackend> cutStable = List.of(TestBackend.start("cut-stable"));

	static final List<TestBackend> cutCanary = List.of(TestBackend.start("cut-canary"));

	static final List<TestBackend> pinStable = List.of(TestBackend.start("pin-stable"));

	static final List<TestBackend> pinCanary = List.of(TestBackend.start("pin-canary"));

	static final List<TestBackend> floodStable = List.of(TestBackend.start("flood-stable"));

	static final List<TestBackend> floodCanary = List.of(TestBackend.start("flood-canary"));

	/**
	 * How many client addresses the load's requests name in turn.
	 */
	static final int CLIENTS = 200;

	static {
		failCanary.status(500);
		// Slow enough that the stable answers' p99 stays under a third of it on a busy
		// machine too: the verdict is the product's, on the latencies it saw.
		slowCanary.get(0).delay(Duration.ofMillis(400));
		fullCanary.get(0).delay(Duration.ofMillis(300));
		shedCanary.get(0).delay(Duration.ofMillis(300));
		cutCanary.get(0).cutBodies();
		// One request in ten of each client (its affinity cookie) that names no status
		// fails: the other clients' requests.
		floodCanary.get(0).failEveryOfEachClient(10, "Cookie");
	}

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("ramp")
			.instances("ramp-stable", rampStable)
			.instances("ramp-canary", rampCanary)
			.set("gateway.lb.splits.ramp.targets.ramp-stable", 100)
			.set("gateway.lb.splits.ramp.targets.ramp-canary", 0)
			.route("fail")
			.instances("fail-stable", failStable)
			.uris("fail-canary", List.of(failCanary.uri()))
			.set("gateway.lb.splits.fail.targets.fail-stable", 100)
			.set("gateway.lb.splits.fail.targets.fail-canary", 0)
			.route("slow")
			.instances("slow-stable", slowStable)
			.instances("slow-canary", slowCanary)
			.set("gateway.lb.splits.slow.targets.slow-stable", 100)
			.set("gateway.lb.splits.slow.targets.slow-canary", 0)
			.route("hold")
			.instances("hold-stable", holdStable)
			.instances("hold-canary", holdCanary)
			.set("gateway.lb.splits.hold.targets.hold-stable", 100)
			.set("gateway.lb.splits.hold.targets.hold-canary", 0)
			.set("gateway.lb.splits.hold.rollout.target", "hold-canary")
			.set("gateway.lb.splits.hold.rollout.steps", "10,100")
			.set("gateway.lb.splits.hold.rollout.interval", "1s")
			.set("gateway.lb.splits.hold.rollout.min-requests", 1_000_000)
			.route("sticky")
			.instances("sticky-stable", stickyStable)
			.instances("sticky-canary", stickyCanary)
			.set("gateway.lb.splits.sticky.targets.sticky-stable", 100)
			.set("gateway.lb.splits.sticky.targets.sticky-canary", 0)
			.set("gateway.lb.splits.sticky.sticky.cookie", "GWLB_AFFINITY")
			.set("gateway.lb.splits.sticky.rollout.target", "sticky-canary")
			.set("gateway.lb.splits.sticky.rollout.steps", "30,60")
			.set("gateway.lb.splits.sticky.rollout.interval", "1h")
			.set("gateway.lb.splits.keep.targets.keep-stable", 100)
			.set("gateway.lb.splits.keep.targets.keep-canary", 0)
			.set("gateway.lb.splits.keep.rollout.target", "keep-canary")
			.set("gateway.lb.splits.keep.rollout.interval", "1h")
			.route("empty")
			.instances("empty-stable", emptyStable)
			.set("gateway.lb.splits.empty.targets.empty-stable", 100)
			.set("gateway.lb.splits.empty.targets.empty-canary", 0)
			.route("full")
			.instances("full-stable", fullStable)
			.instances("full-canary", fullCanary)
			.set("gateway.lb.splits.full.targets.full-stable", 100)
			.set("gateway.lb.splits.full.targets.full-canary", 0)
			// One connection and one waiting request: a canary too small for its step.
			.set("gateway.lb.services.full-canary.pool.max-connections", 1)
			.set("gateway.lb.services.full-canary.pool.max-pending", 1)
			.set("gateway.lb.services.full-canary.retry.attempts", 0)
			.route("shed")
			.instances("shed-stable", shedStable)
			.instances("shed-canary", shedCanary)
			.set("gateway.lb.splits.shed.targets.shed-stable", 100)
			.set("gateway.lb.splits.shed.targets.shed-canary", 0)
			.set("gateway.lb.services.shed-canary.concurrency.limit", "fixed")
			.set("gateway.lb.services.shed-canary.concurrency.initial-limit", 1)
			.set("gateway.lb.services.shed-canary.retry.attempts", 0)
			.route("pin")
			.instances("pin-stable", pinStable)
			.instances("pin-canary", pinCanary)
			.set("gateway.lb.splits.pin.targets.pin-stable", 100)
			.set("gateway.lb.splits.pin.targets.pin-canary", 0)
			.set("gateway.lb.splits.pin.sticky.cookie", "GWLB_AFFINITY")
			.route("cut")
			.instances("cut-stable", cutStable)
			.instances("cut-canary", cutCanary)
			.set("gateway.lb.splits.cut.targets.cut-stable", 100)
			.set("gateway.lb.splits.cut.targets.cut-canary", 0)
			.route("flood")
			.instances("flood-stable", floodStable)
			.instances("flood-canary", floodCanary)
			.set("gateway.lb.splits.flood.targets.flood-stable", 100)
			.set("gateway.lb.splits.flood.targets.flood-canary", 0)
			.set("gateway.lb.splits.flood.sticky.cookie", "GWLB_AFFINITY")
			// The 500s these canaries give are the rollout's to judge: passive health
			// would eject their one endpoint first.
			.set("gateway.lb.services.pin-canary.health.passive.consecutive-failures", 0)
			.set("gateway.lb.services.flood-canary.health.passive.consecutive-failures", 0)
			.set("gateway.lb.services.cut-canary.health.passive.consecutive-failures", 0)
			.set("gateway.lb.trusted-proxies", "127.0.0.1/32")
			.set("management.endpoints.web.exposure.include", "gatewaylb,prometheus")
			.set("management.endpoint.gatewaylb.access", "unrestricted");
	}

	@Autowired
	ConfigurableApplicationContext context;

	@Autowired
	SplitRollouts rollouts;

	@AfterEach
	void restoreSettings() {
		if (this.context.getEnvironment().getPropertySources().remove("refreshed") != null) {
			this.context.publishEvent(new EnvironmentChangeEvent(this.context, Set.of("gateway.lb.splits")));
		}
	}

	@AfterAll
	static void stopBackends() {
		List.of(rampStable, rampCanary, failStable, slowStable, slowCanary, holdStable, holdCanary, stickyStable,
				stickyCanary, emptyStable, fullStable, fullCanary, shedStable, shedCanary, cutStable, cutCanary,
				pinStable, pinCanary, floodStable, floodCanary)
			.forEach((backends) -> backends.forEach(TestBackend::close));
		failCanary.close();
	}

	@Test
	void aHealthyCanaryRampsStepByStepToPromotion() {
		try (ClientLoad load = ClientLoad.fromClients(this.client, "/ramp/", 4, CLIENTS)) {
			assertThat(load.window(200).share("ramp-canary")).isZero();
			refresh(Map.of("gateway.lb.splits.ramp.rollout.target", "ramp-canary",
					"gateway.lb.splits.ramp.rollout.steps", "20,50,100", "gateway.lb.splits.ramp.rollout.interval",
					"2s", "gateway.lb.splits.ramp.rollout.min-requests", 20,
					// Loopback answers take a few milliseconds: a GC pause on a busy
					// build machine must not pass for a slow canary.
					"gateway.lb.splits.ramp.rollout.max-latency-ratio", 5));
			// Answers of windows taken while one step was in force from start to end, and
			// how many of them the canary gave.
			Map<Integer, long[]> answersByStep = new TreeMap<>();
			Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
				Rollout.Status before = status("ramp");
				ClientLoad.Window window = load.window(100);
				Rollout.Status after = status("ramp");
				if (before != null && before.equals(after) && after.state() == Rollout.State.PROGRESSING) {
					long[] counts = answersByStep.computeIfAbsent(after.step(), (step) -> new long[2]);
					counts[0] += window.size();
					counts[1] += window.count("ramp-canary");
				}
				return after != null && after.state() == Rollout.State.PROMOTED;
			});
			assertThat(answersByStep).as("windows per step").containsKeys(0, 1);
			// Each request's key is its own id, new every run: a band from the binomial.
			long[] first = answersByStep.get(0);
			assertThat((double) first[1]).as("step 20%% of %d answers", first[0])
				.isBetween(fiveSigmaBelow(first[0], 0.2), fiveSigmaAbove(first[0], 0.2));
			long[] second = answersByStep.get(1);
			assertThat((double) second[1]).as("step 50%% of %d answers", second[0])
				.isBetween(fiveSigmaBelow(second[0], 0.5), fiveSigmaAbove(second[0], 0.5));
			assertThat(load.window(200).share("ramp-canary")).as("promoted at 100%").isEqualTo(1.0);
			assertThat(load.failures()).as("client-visible errors: %s", load.failureCauses()).isZero();
		}
		String report = this.client.getNow("/actuator/gatewaylb/ramp").body();
		assertThat(report).contains("\"state\":\"promoted\"", "\"percent\":100", "\"verdict\":\"next\"",
				"\"verdict\":\"promoted\"");
		assertThat(metric("gateway_lb_rollout_percent{split=\"ramp\"}")).isEqualTo(100);
		assertThat(metric("gateway_lb_rollout_transitions_total{split=\"ramp\",to=\"promoted\"}")).isEqualTo(1);
		assertThat(metric("gateway_lb_rollout_transitions_total{split=\"ramp\",to=\"progressing\"}")).isEqualTo(3);
	}

	@Test
	void aFailingCanaryIsRolledBackAtItsFirstJudgement() {
		try (ClientLoad load = ClientLoad.fromClients(this.client, "/fail/", 4, CLIENTS)) {
			load.await(100);
			refresh(Map.of("gateway.lb.splits.fail.rollout.target", "fail-canary",
					"gateway.lb.splits.fail.rollout.steps", "10,50,100", "gateway.lb.splits.fail.rollout.interval",
					"2s", "gateway.lb.splits.fail.rollout.min-requests", 10));
			long[] answers = new long[2];
			Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
				ClientLoad.Window window = load.window(100);
				answers[0] += window.size();
				answers[1] += window.count("fail-canary");
				Rollout.Status status = status("fail");
				return status != null && status.state() == Rollout.State.ROLLED_BACK;
			});
			// Each request's key is its own id, new every run: a band from the binomial,
			// over every answer until the verdict (the last windows' come after it, at
			// 0%).
			assertThat((double) answers[1]).as("the canary's answers of %d before the verdict", answers[0])
				.isLessThanOrEqualTo(fiveSigmaAbove(answers[0], 0.1));
			assertThat(status("fail").step()).isZero();
			// Requests routed before the verdict may still be on their way back.
			load.awaitAnsweredSoFar();
			assertThat(inFlight("fail-canary")).isZero();
			assertThat(load.window(300).share("fail-canary")).as("after the rollback").isZero();
		}
		String report = this.client.getNow("/actuator/gatewaylb/fail").body();
		assertThat(report).contains("\"state\":\"rolled-back\"", "\"percent\":0",
				"\"reason\":\"error rate 1.0000 against 0.0000 of the other targets, each without its most failing client"
						+ " (max-error-rate-increase 0.01)\"");
		assertThat(metric("gateway_lb_rollout_percent{split=\"fail\"}")).isZero();
		assertThat(metric("gateway_lb_rollout_transitions_total{split=\"fail\",to=\"rolled-back\"}")).isEqualTo(1);
	}

	@Test
	void aCanaryWithNoEndpointIsRolledBackAtItsFirstJudgementOnTheGatewaysOwnAnswers() {
		try (ClientLoad load = ClientLoad.fromClients(this.client, "/empty/", 4, CLIENTS)) {
			load.await(100);
			refresh(Map.of("gateway.lb.splits.empty.rollout.target", "empty-canary",
					"gateway.lb.splits.empty.rollout.steps", "20,100", "gateway.lb.splits.empty.rollout.interval", "1s",
					"gateway.lb.splits.empty.rollout.min-requests", 10));
			Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
				load.window(20);
				Rollout.Status status = status("empty");
				return status != null && status.state() == Rollout.State.ROLLED_BACK;
			});
		}
		// Judged at the end of its first interval, not held for want of canary answers.
		assertThat(verdicts("empty")).containsExactly("started", "rolled-back");
		Verdict verdict = last(this.rollouts.track("empty").verdicts());
		assertThat(verdict.canary().errors()).isEqualTo(verdict.canary().requests()).isGreaterThanOrEqualTo(10);
		assertThat(verdict.reason()).startsWith("error rate 1.0000 against 0.0000");
	}

	@Test
	void aCanaryThatSaturatesIsNotPromoted() {
		try (ClientLoad load = ClientLoad.fromClients(this.client, "/full/", 4, CLIENTS)) {
			load.await(100);
			refresh(Map.of("gateway.lb.splits.full.rollout.target", "full-canary",
					"gateway.lb.splits.full.rollout.steps", "50,100", "gateway.lb.splits.full.rollout.interval", "2s",
					"gateway.lb.splits.full.rollout.min-requests", 10,
					// The canary is slow on purpose: only its 503s are judged here.
					"gateway.lb.splits.full.rollout.max-latency-ratio", 1000));
			Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
				load.window(20);
				Rollout.Status status = status("full");
				return status != null && status.state() != Rollout.State.PROGRESSING;
			});
		}
		assertThat(status("full").state()).isEqualTo(Rollout.State.ROLLED_BACK);
		Verdict verdict = last(this.rollouts.track("full").verdicts());
		assertThat(verdict.step()).isZero();
		assertThat(verdict.canary().errors()).as("the gateway's 503s for the canary's full pool").isPositive();
		assertThat(metric("gateway_lb_rejected_total{reason=\"saturated\",service=\"full-canary\"}")).isPositive();
	}

	@Test
	void aCanaryWhoseLimitShedsItsRequestsIsNotPromoted() {
		try (ClientLoad load = ClientLoad.fromClients(this.client, "/shed/", 4, CLIENTS)) {
			load.await(100);
			refresh(Map.of("gateway.lb.splits.shed.rollout.target", "shed-canary",
					"gateway.lb.splits.shed.rollout.steps", "50,100", "gateway.lb.splits.shed.rollout.interval", "2s",
					"gateway.lb.splits.shed.rollout.min-requests", 10,
					// The canary is slow on purpose: only its sheds are judged here.
					"gateway.lb.splits.shed.rollout.max-latency-ratio", 1000));
			Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
				load.window(20);
				Rollout.Status status = status("shed");
				return status != null && status.state() != Rollout.State.PROGRESSING;
			});
		}
		assertThat(status("shed").state()).isEqualTo(Rollout.State.ROLLED_BACK);
		Verdict verdict = last(this.rollouts.track("shed").verdicts());
		assertThat(verdict.step()).isZero();
		assertThat(verdict.canary().errors()).as("the 503s its concurrency limit shed").isPositive();
		assertThat(metric("gateway_lb_rejected_total{reason=\"shed\",service=\"shed-canary\"}")).isPositive();
	}

	@Test
	void aCanaryWhoseBodiesBreakAfterTheirHeadersIsRolledBack() {
		// Its headers say 200, its bodies break off: counted at the headers alone, the
		// canary would be promoted while every client of it got a truncated answer.
		try (ClientLoad load = ClientLoad.fromClients(this.client, "/cut/", 4, CLIENTS)) {
			refresh(Map.of("gateway.lb.splits.cut.rollout.target", "cut-canary", "gateway.lb.splits.cut.rollout.steps",
					"50,100", "gateway.lb.splits.cut.rollout.interval", "2s",
					"gateway.lb.splits.cut.rollout.min-requests", 10));
			awaitJudged("cut");
		}
		assertThat(status("cut").state()).isEqualTo(Rollout.State.ROLLED_BACK);
		Verdict verdict = last(this.rollouts.track("cut").verdicts());
		assertThat(verdict.step()).isZero();
		assertThat(verdict.reason()).startsWith("error rate ");
		// All of them but those whose body was still on its way (four lanes) when the
		// step was judged.
		assertThat(verdict.canary().errors()).as("the truncated bodies")
			.isGreaterThanOrEqualTo(verdict.canary().requests() - 4);
	}

	@Test
	void aSlowCanaryIsRolledBackOnItsLatency() {
		try (ClientLoad load = ClientLoad.fromClients(this.client, "/slow/", 4, CLIENTS)) {
			load.await(100);
			refresh(Map.of("gateway.lb.splits.slow.rollout.target", "slow-canary",
					"gateway.lb.splits.slow.rollout.steps", "20,100", "gateway.lb.splits.slow.rollout.interval", "2s",
					"gateway.lb.splits.slow.rollout.min-requests", 10,
					"gateway.lb.splits.slow.rollout.max-latency-ratio", 3));
			Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
				Rollout.Status status = status("slow");
				return status != null && status.state() == Rollout.State.ROLLED_BACK;
			});
			assertThat(status("slow").reason()).startsWith("p99 ").endsWith("(max-latency-ratio 3.0)");
			// Requests routed before the verdict may still be on their way back.
			load.awaitAnsweredSoFar();
			assertThat(inFlight("slow-canary")).isZero();
			assertThat(load.window(100).share("slow-canary")).isZero();
			assertThat(load.failures()).as("client-visible errors: %s", load.failureCauses()).isZero();
		}
		Verdict verdict = last(this.rollouts.track("slow").verdicts());
		// The canary's every answer waits 400 ms; the verdict must rest on that p99 being
		// more than max-latency-ratio times the stable one, whatever the machine's speed.
		assertThat(verdict.canary().p99Nanos()).as("the canary's p99").isGreaterThan(400_000_000L);
		assertThat(verdict.others().p99Nanos() * 3).as("three times the stable p99")
			.isLessThan(verdict.canary().p99Nanos());
	}

	@Test
	void aStepWithoutEnoughCanaryRequestsHoldsAndOperatorsPauseResumePromoteAndRollBack() {
		// min-requests is out of reach: every judgement holds the first step.
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> verdicts("hold").stream().filter("hold"::equals).count() >= 2);
		assertThat(status("hold").state()).isEqualTo(Rollout.State.PROGRESSING);
		assertThat(status("hold").step()).isZero();
		assertThat(act("hold", "pause").status()).isEqualTo(200);
		assertThat(status("hold").state()).isEqualTo(Rollout.State.PAUSED);
		// Two intervals and more go by without a judgement: the pause stays the last
		// word.
		Awaitility.await()
			.during(Duration.ofMillis(2_500))
			.atMost(Duration.ofSeconds(5))
			.until(() -> last(verdicts("hold")).equals("paused") && status("hold").state() == Rollout.State.PAUSED);
		assertThat(act("hold", "resume").body()).contains("\"state\":\"progressing\"");
		GatewayClient.Answer promoted = act("hold", "promote");
		assertThat(promoted.body()).contains("\"state\":\"promoted\"", "\"percent\":100");
		assertThat(answers("/hold/", 50)).containsOnlyKeys("hold-canary");
		GatewayClient.Answer rolledBack = act("hold", "roll-back");
		assertThat(rolledBack.body()).contains("\"state\":\"rolled-back\"", "\"percent\":0",
				"\"reason\":\"rolled back by an operator\"");
		assertThat(answers("/hold/", 50)).containsOnlyKeys("hold-stable");
		assertThat(verdicts("hold")).contains("paused", "resumed", "promoted", "rolled-back");
		assertThat(act("hold", "sideways").status()).isEqualTo(400);
		assertThat(act("no-such-split", "pause").status()).isEqualTo(404);
		assertThat(act("ramp", "pause").status()).as("a split without a rollout").isEqualTo(404);
	}

	@Test
	void aRefreshKeepsTheStateUnlessItChangesTheRolloutBlock() {
		assertThat(act("keep", "promote").body()).contains("\"state\":\"promoted\"");
		refresh(Map.of("gateway.lb.splits.keep.targets.keep-stable", 90));
		Awaitility.await()
			.atMost(Duration.ofSeconds(5))
			.until(() -> this.client.getNow("/actuator/gatewaylb/keep").body().contains("\"weight\":90"));
		// An action runs on the control thread after the refresh's task: when it is back,
		// the refresh was applied (a pause does nothing to a promoted rollout).
		this.rollouts.act("keep", RolloutAction.PAUSE);
		assertThat(status("keep").state()).as("other keys changed").isEqualTo(Rollout.State.PROMOTED);
		refresh(Map.of("gateway.lb.splits.keep.targets.keep-stable", 90, "gateway.lb.splits.keep.rollout.steps",
				"10,100"));
		Awaitility.await()
			.atMost(Duration.ofSeconds(5))
			.until(() -> status("keep").state() == Rollout.State.PROGRESSING);
		assertThat(status("keep").percent()).as("the block changed: its first step").isEqualTo(10);
		assertThat(last(this.rollouts.track("keep").verdicts()).reason()).isEqualTo("the rollout block changed");
	}

	@Test
	void stickyClientsMoveOnlyWhenAStepMovesTheirKeyAndAllReturnOnRollback() {
		List<String> clients = SplitIT.seededAffinityValues(300);
		Split sticky = Split.of("sticky",
				List.of(new Split.Target("sticky-stable", 100), new Split.Target("sticky-canary", 0)));
		Map<String, String> atFirstStep = targets(clients);
		assertThat(atFirstStep).as("each key where the 30% layout puts it")
			.isEqualTo(expectedTargets(clients, sticky.withShare(1, 30)));
		long canaryAtFirstStep = atFirstStep.values().stream().filter("canary"::equals).count();
		assertThat((double) canaryAtFirstStep).as("30% of 300")
			.isBetween(fiveSigmaBelow(300, 0.3), fiveSigmaAbove(300, 0.3));
		assertThat(act("sticky", "promote").body()).contains("\"percent\":60");
		Map<String, String> atLastStep = targets(clients);
		assertThat(atLastStep).as("each key where the 60% layout puts it")
			.isEqualTo(expectedTargets(clients, sticky.withShare(1, 60)));
		int moved = 0;
		for (String client : clients) {
			if (!atFirstStep.get(client).equals(atLastStep.get(client))) {
				assertThat(atFirstStep.get(client)).as("only stable keys move to the canary").isEqualTo("stable");
				moved++;
			}
		}
		// From 30% to 60%: 30% of the keys move, and no other.
		assertThat((double) moved).isBetween(fiveSigmaBelow(300, 0.3), fiveSigmaAbove(300, 0.3));
		assertThat(act("sticky", "roll-back").status()).isEqualTo(200);
		assertThat(targets(clients).values()).as("every client back on stable").containsOnly("stable");
	}

	@Test
	void oneClientPinnedToTheCanaryCannotRollBackAHealthyOneWithItsErrors() {
		// 30 other clients: 20 whose affinity value the 50% step puts on the canary, 10
		// on stable; and one more on the canary whose every request the canary answers
		// 500, sent as fast as two lanes go.
		Split layout = Split.of("pin", List.of(new Split.Target("pin-stable", 100), new Split.Target("pin-canary", 0)))
			.withShare(1, 50);
		List<String> others = new ArrayList<>(clientsOf(layout, "pin-canary", 21));
		String pinned = others.remove(0);
		others.addAll(clientsOf(layout, "pin-stable", 10));
		refresh(Map.of("gateway.lb.splits.pin.rollout.target", "pin-canary", "gateway.lb.splits.pin.rollout.steps",
				"50,100", "gateway.lb.splits.pin.rollout.interval", "2s", "gateway.lb.splits.pin.rollout.min-requests",
				20, "gateway.lb.splits.pin.rollout.max-latency-ratio", 1000));
		try (ClientLoad attacker = withCookies(this.client, "/pin/?status=500", 2, List.of(pinned));
				ClientLoad load = withCookies(this.client, "/pin/", 4, others)) {
			awaitJudged("pin");
			assertThat(attacker.failures()).as("the pinned client's 500s").isGreaterThan(100);
		}
		assertThat(status("pin").state()).isEqualTo(Rollout.State.PROMOTED);
		for (Verdict verdict : this.rollouts.track("pin").verdicts()) {
			if (verdict.kind() == VerdictKind.NEXT || verdict.kind() == VerdictKind.PROMOTED) {
				// 10 of the pinned client's answers per interval at most, against the
				// other clients' 10 each, and the verdict taken without the client that
				// failed most; a hold (too few clients yet) judged nothing. At the
				// default max-error-rate-increase (0.01): the 500s were all one client's.
				assertThat(verdict.canary().clients()).as(verdict.toString()).isGreaterThanOrEqualTo(20);
				assertThat(verdict.canary().topClientErrors()).as(verdict.toString()).isPositive();
				assertThat(verdict.canary().errors() - verdict.canary().topClientErrors()).as(verdict.toString())
					.isZero();
			}
		}
	}

	@Test
	void aFloodOfCheapSuccessesFromOneClientCannotPromoteACanaryFailingTheOthers() {
		// The canary fails one request in ten of each of the 30 other clients'; one
		// client pinned to it floods it with requests it answers 200, on six lanes
		// against their two: counted in full, they would dilute its error rate below 2%.
		// The step waits for 200 canary answers: a first interval of a few answers a
		// client may hold none of their failures yet, and the verdict is then right to
		// move on.
		Split layout = Split
			.of("flood", List.of(new Split.Target("flood-stable", 100), new Split.Target("flood-canary", 0)))
			.withShare(1, 50);
		List<String> others = new ArrayList<>(clientsOf(layout, "flood-canary", 21));
		String flooder = others.remove(0);
		others.addAll(clientsOf(layout, "flood-stable", 10));
		refresh(Map.of("gateway.lb.splits.flood.rollout.target", "flood-canary",
				"gateway.lb.splits.flood.rollout.steps", "50,100", "gateway.lb.splits.flood.rollout.interval", "2s",
				"gateway.lb.splits.flood.rollout.min-requests", 200,
				// Below the 21 clients: two of them sharing a client slot must not hold
				// the step.
				"gateway.lb.splits.flood.rollout.min-clients", 15,
				"gateway.lb.splits.flood.rollout.max-error-rate-increase", 0.05,
				"gateway.lb.splits.flood.rollout.max-latency-ratio", 1000));
		try (ClientLoad flood = withCookies(this.client, "/flood/?status=200", 6, List.of(flooder));
				ClientLoad load = withCookies(this.client, "/flood/", 2, others)) {
			awaitJudged("flood");
			// Twice the others' and more: counted in full, the canary's error rate would
			// be a third of their 10% at most, under max-error-rate-increase.
			assertThat(flood.served()).as("the flood").isGreaterThan(2 * load.served());
		}
		assertThat(status("flood").state()).isEqualTo(Rollout.State.ROLLED_BACK);
		Verdict verdict = last(this.rollouts.track("flood").verdicts());
		assertThat(verdict.step()).as("the step of %s", this.rollouts.track("flood").verdicts()).isZero();
		assertThat(verdict.canary().clients()).isGreaterThanOrEqualTo(15);
		// The others' one failure in ten, the flood's successes counted 10 at a time:
		// about 10%, where the whole flood would have brought it under 2%.
		assertThat(verdict.reason()).startsWith("error rate ");
		assertThat((double) verdict.canary().errors() / verdict.canary().requests()).as("the judged error rate")
			.isGreaterThan(0.05);
	}

	/**
	 * Returns lanes of clients that send the affinity values in turn.
	 */
	/**
	 * Sends each request with one of the sticky values in turn, each value the cookie of
	 * one client at an address of its own (through the proxy at loopback): a rollout
	 * tells clients apart by address.
	 */
	private static ClientLoad withCookies(GatewayClient client, String path, int lanes, List<String> values) {
		return new ClientLoad(client, path, lanes, () -> 0, (number) -> {
			int index = (int) (number % values.size());
			return Map.of("Cookie", "GWLB_AFFINITY=" + values.get(index), "X-Forwarded-For",
					addressOf(values.get(index)));
		});
	}

	/**
	 * Returns the address of the client whose sticky value this is.
	 */
	private static String addressOf(String stickyValue) {
		int hash = stickyValue.hashCode() & 0xffff;
		return "10.99." + (hash >>> 8) + "." + (hash & 0xff);
	}

	/**
	 * Waits until a split's rollout is promoted or rolled back.
	 */
	private void awaitJudged(String split) {
		Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
			Rollout.Status status = status(split);
			return status != null && status.state() != Rollout.State.PROGRESSING;
		});
	}

	/**
	 * Returns {@code count} affinity values the layout puts on {@code service}, from the
	 * seeded list: the same every run.
	 */
	private static List<String> clientsOf(Split layout, String service, int count) {
		List<String> chosen = new ArrayList<>();
		for (String value : SplitIT.seededAffinityValues(10 * count + 100)) {
			if (chosen.size() < count && layout.targets().get(layout.pick(value)).service().equals(service)) {
				chosen.add(value);
			}
		}
		assertThat(chosen).hasSize(count);
		return chosen;
	}

	private static Map<String, String> expectedTargets(List<String> clients, Split layout) {
		Map<String, String> targets = new HashMap<>();
		for (String client : clients) {
			targets.put(client, layout.targets().get(layout.pick(client)).service().substring("sticky-".length()));
		}
		return targets;
	}

	/**
	 * Returns five standard deviations of the binomial below its mean: {@code n} fair
	 * draws of probability {@code p} fall below it about three times in ten million.
	 */
	private static double fiveSigmaBelow(long n, double p) {
		return n * p - 5 * Math.sqrt(n * p * (1 - p));
	}

	private static double fiveSigmaAbove(long n, double p) {
		return n * p + 5 * Math.sqrt(n * p * (1 - p));
	}

	private Map<String, String> targets(List<String> clients) {
		Map<String, String> targets = new HashMap<>();
		for (String client : clients) {
			GatewayClient.Answer answer = this.client.getNow("/sticky/", Map.of("Cookie", "GWLB_AFFINITY=" + client));
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.setCookies()).isEmpty();
			targets.put(client, answer.backend().startsWith("sticky-canary") ? "canary" : "stable");
		}
		return targets;
	}

	private Map<String, Integer> answers(String path, int count) {
		Map<String, Integer> backends = new HashMap<>();
		for (int i = 0; i < count; i++) {
			backends.merge(this.client.getNow(path).backend(), 1, Integer::sum);
		}
		return backends;
	}

	private GatewayClient.Answer act(String split, String action) {
		return this.client.send("POST", "/actuator/gatewaylb/" + split, "{\"rollout\":\"" + action + "\"}");
	}

	private Rollout.Status status(String split) {
		RolloutTrack track = this.rollouts.track(split);
		return (track != null) ? track.status() : null;
	}

	private List<String> verdicts(String split) {
		return this.rollouts.track(split).verdicts().stream().map((verdict) -> verdict.kind().label()).toList();
	}

	private void refresh(Map<String, Object> properties) {
		this.context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("refreshed", properties));
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, properties.keySet()));
	}

	private static <T> T last(List<T> values) {
		return values.get(values.size() - 1);
	}

}
