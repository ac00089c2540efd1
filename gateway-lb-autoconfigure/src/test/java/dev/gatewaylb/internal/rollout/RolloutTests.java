package dev.gatewaylb.internal.rollout;

import java.util.ArrayList;
import java.util.List;

import dev.gatewaylb.internal.rollout.RolloutPlan;
import dev.gatewaylb.internal.rollout.Rollout.State;
import dev.gatewaylb.internal.rollout.Rollout.Status;
import dev.gatewaylb.internal.rollout.Rollout.Window;
import dev.gatewaylb.rollout.RolloutAction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.convert.DurationStyle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RolloutTests {

	private static final long S = 1_000_000_000L;

	private static final long MS = 1_000_000L;

	private static final RolloutPlan PLAN = new RolloutPlan("shop-canary", new int[] { 5, 25, 50, 100 }, 300 * S, 100,
			0.01, 1.5);

	private static final Window HEALTHY_OTHERS = new Window(10_000, 20, 40 * MS, 30);

	@Test
	void aHealthyCanaryWalksEveryStepAndIsPromotedAfterTheLast() {
		long now = 1_000 * S;
		Status status = Rollout.start(PLAN, now);
		List<Integer> percents = new ArrayList<>(List.of(status.percent()));
		List<Judgement.Kind> kinds = new ArrayList<>();
		while (status.state() == State.PROGRESSING) {
			now = status.judgeAtNanos();
			Judgement judgement = Rollout.judge(PLAN, status, new Window(500, 1, 45 * MS, 30), HEALTHY_OTHERS, now);
			kinds.add(judgement.kind());
			status = judgement.status();
			percents.add(status.percent());
		}
		assertThat(percents).containsExactly(5, 25, 50, 100, 100);
		assertThat(kinds).containsExactly(Judgement.Kind.NEXT, Judgement.Kind.NEXT, Judgement.Kind.NEXT,
				Judgement.Kind.PROMOTED);
		assertThat(status).isEqualTo(new Status(State.PROMOTED, 3, 100, 0, null));
		assertThat(now).as("four intervals").isEqualTo(1_000 * S + 4 * 300 * S);
	}

	@Test
	void isNotJudgedBeforeItsIntervalHasPassed() {
		Status status = Rollout.start(PLAN, 0);
		Window failing = new Window(500, 500, 45 * MS, 30);
		assertThat(Rollout.judge(PLAN, status, failing, HEALTHY_OTHERS, 300 * S - 1))
			.isEqualTo(new Judgement(Judgement.Kind.NOT_DUE, status));
		Judgement due = Rollout.judge(PLAN, status, failing, HEALTHY_OTHERS, 300 * S);
		assertThat(due.kind()).isEqualTo(Judgement.Kind.ROLLED_BACK);
		assertThat(due.status().state()).isEqualTo(State.ROLLED_BACK);
	}

	@Test
	void staysOnItsStepWithTooFewCanaryRequestsAndIsJudgedAgainAnIntervalLater() {
		Status status = Rollout.start(PLAN, 0);
		Judgement held = Rollout.judge(PLAN, status, new Window(99, 99, 900 * MS, 30), HEALTHY_OTHERS, 301 * S);
		assertThat(held)
			.isEqualTo(new Judgement(Judgement.Kind.HOLD, new Status(State.PROGRESSING, 0, 5, 601 * S, null)));
		Judgement next = Rollout.judge(PLAN, held.status(), new Window(100, 0, 40 * MS, 30), HEALTHY_OTHERS, 601 * S);
		assertThat(next)
			.isEqualTo(new Judgement(Judgement.Kind.NEXT, new Status(State.PROGRESSING, 1, 25, 901 * S, null)));
	}

	@Test
	void staysOnItsStepWhileItsRequestsComeFromTooFewClientsAndSaysHowManyItSaw() {
		RolloutPlan plan = new RolloutPlan("shop-canary", new int[] { 50, 100 }, 300 * S, 100, 0.01, 1.5, null, null,
				10, 20);
		Status status = Rollout.start(plan, 0);
		Window fewClients = new Window(190, 0, 40 * MS, 19);
		Judgement held = Rollout.judge(plan, status, fewClients, HEALTHY_OTHERS, 300 * S);
		assertThat(held.kind()).isEqualTo(Judgement.Kind.HOLD);
		assertThat(Rollout.holdReason(plan, fewClients))
			.isEqualTo("canary requests from fewer than min-clients clients (19 of 20)");
		assertThat(Rollout.holdReason(plan, new Window(60, 0, 40 * MS, 25)))
			.isEqualTo("fewer than min-requests canary requests (60 of 100, from 25 clients)");
		assertThat(Rollout.judge(plan, held.status(), new Window(200, 0, 40 * MS, 20), HEALTHY_OTHERS, 600 * S).kind())
			.isEqualTo(Judgement.Kind.NEXT);
	}

	@Test
	void otherTargetsFromTooFewClientsAreNoBaseline() {
		RolloutPlan plan = new RolloutPlan("shop-canary", new int[] { 50, 100 }, 300 * S, 100, 0.01, 1.5, null, null,
				10, 20);
		Window canary = new Window(1000, 20, 40 * MS, 100);
		// Against a baseline of 2% errors from 20 clients the canary's 2% passes; the
		// same answers from 19 clients are no baseline, and the canary is held against
		// 0.
		assertThat(Rollout.judge(plan, Rollout.start(plan, 0), canary, new Window(10_000, 200, 40 * MS, 20), 300 * S)
			.kind()).isEqualTo(Judgement.Kind.NEXT);
		Judgement judgement = Rollout.judge(plan, Rollout.start(plan, 0), canary, new Window(10_000, 200, 40 * MS, 19),
				300 * S);
		assertThat(judgement.kind()).isEqualTo(Judgement.Kind.ROLLED_BACK);
		assertThat(judgement.status().reason()).startsWith("error rate 0.0200 against 0.0000");
	}

	@ParameterizedTest(name = "canary {0} errors in 1000, others {1} in 10000 -> {2}")
	@CsvSource({ "12, 20, PROGRESSING", "13, 20, ROLLED_BACK", "10, 0, PROGRESSING", "11, 0, ROLLED_BACK",
			"0, 10000, PROGRESSING" })
	void rollsBackWhenTheCanaryErrorRateExceedsTheOthersByMoreThanTheIncrease(long canaryErrors, long otherErrors,
			State expected) {
		// Others 0.2% (20 of 10,000): the canary may reach 1.2% (12 of 1,000), not 1.3%.
		Status status = Rollout
			.judge(PLAN, Rollout.start(PLAN, 0), new Window(1000, canaryErrors, 40 * MS, 30),
					new Window(10_000, otherErrors, 40 * MS, 30), 300 * S)
			.status();
		assertThat(status.state()).isEqualTo(expected);
		if (expected == State.ROLLED_BACK) {
			assertThat(status.percent()).isZero();
			assertThat(status.reason()).startsWith("error rate 0.0").contains("max-error-rate-increase 0.01");
		}
	}

	@ParameterizedTest(name = "canary p99 {0} ms, others {1} ms -> {2}")
	@CsvSource({ "60, 40, PROGRESSING", "61, 40, ROLLED_BACK", "500, 0, PROGRESSING" })
	void rollsBackWhenTheCanaryP99IsMoreThanTheRatioOfTheOthers(long canaryMillis, long otherMillis, State expected) {
		Status status = Rollout
			.judge(PLAN, Rollout.start(PLAN, 0), new Window(1000, 0, canaryMillis * MS, 30),
					new Window(10_000, 0, otherMillis * MS, 30), 300 * S)
			.status();
		assertThat(status.state()).isEqualTo(expected);
		if (expected == State.ROLLED_BACK) {
			assertThat(status.reason())
				.isEqualTo("p99 61.0 ms against 40.0 ms of the other targets (max-latency-ratio 1.5)");
		}
	}

	@Test
	void otherTargetsWithFewerThanMinRequestsAreNoBaseline() {
		// Stragglers of the step before a 100% step: 5 answers, fast, one failed.
		Window stragglers = new Window(5, 1, 2 * MS, 30);
		Status slowButHealthy = Rollout
			.judge(PLAN, Rollout.start(PLAN, 0), new Window(1000, 0, 40 * MS, 30), stragglers, 300 * S)
			.status();
		assertThat(slowButHealthy.state()).as("latency not judged").isEqualTo(State.PROGRESSING);
		assertThat(slowButHealthy.step()).isEqualTo(1);
		Status failing = Rollout
			.judge(PLAN, Rollout.start(PLAN, 0), new Window(1000, 20, 40 * MS, 30), stragglers, 300 * S)
			.status();
		assertThat(failing.state()).as("errors held against 0").isEqualTo(State.ROLLED_BACK);
		assertThat(failing.reason()).startsWith("error rate 0.0200 against 0.0000 ");
	}

	@Test
	void aRolledBackRolloutStaysRolledBack() {
		Status rolledBack = Rollout.rollBack(Rollout.start(PLAN, 0), "by an operator");
		assertThat(rolledBack).isEqualTo(new Status(State.ROLLED_BACK, 0, 0, 0, "by an operator"));
		Window healthy = new Window(1000, 0, 40 * MS, 30);
		assertThat(Rollout.judge(PLAN, rolledBack, healthy, HEALTHY_OTHERS, 10_000 * S))
			.isEqualTo(new Judgement(Judgement.Kind.NOT_DUE, rolledBack));
		assertThat(Rollout.promote(PLAN, rolledBack)).isSameAs(rolledBack);
		assertThat(Rollout.resume(PLAN, rolledBack, 0)).isSameAs(rolledBack);
		assertThat(Rollout.rollBack(rolledBack, "again")).isSameAs(rolledBack);
	}

	@Test
	void aPausedRolloutIsNotJudgedAndResumesOnItsStepWithAFreshInterval() {
		Status status = Rollout
			.judge(PLAN, Rollout.start(PLAN, 0), new Window(500, 0, 40 * MS, 30), HEALTHY_OTHERS, 300 * S)
			.status();
		Status paused = Rollout.pause(status);
		assertThat(paused).isEqualTo(new Status(State.PAUSED, 1, 25, 0, null));
		assertThat(Rollout.judge(PLAN, paused, new Window(500, 500, 40 * MS, 30), HEALTHY_OTHERS, 10_000 * S))
			.isEqualTo(new Judgement(Judgement.Kind.NOT_DUE, paused));
		assertThat(Rollout.resume(PLAN, paused, 5_000 * S))
			.isEqualTo(new Status(State.PROGRESSING, 1, 25, 5_300 * S, null));
		assertThat(Rollout.promote(PLAN, paused)).isEqualTo(new Status(State.PROMOTED, 3, 100, 0, null));
	}

	@ParameterizedTest(name = "{0} on {1} -> {2} at {3}%")
	@CsvSource({ "PAUSE, PROGRESSING, PAUSED, 25", "PAUSE, PAUSED, PAUSED, 25", "RESUME, PAUSED, PROGRESSING, 25",
			"RESUME, PROGRESSING, PROGRESSING, 25", "PROMOTE, PAUSED, PROMOTED, 100",
			"PROMOTE, ROLLED_BACK, ROLLED_BACK, 0", "ROLL_BACK, PROGRESSING, ROLLED_BACK, 0",
			"ROLL_BACK, PROMOTED, ROLLED_BACK, 0" })
	void anOperatorsActionMovesTheRolloutFromSomeStatesOnly(RolloutAction action, State from, State to, int percent) {
		Status on = new Status(from, 1, (from == State.ROLLED_BACK) ? 0 : 25, (from == State.PROGRESSING) ? S : 0,
				(from == State.ROLLED_BACK) ? "earlier" : null);
		Status next = Rollout.act(PLAN, on, action, "by an operator", 7 * S);
		assertThat(next.state()).isEqualTo(to);
		assertThat(next.percent()).isEqualTo(percent);
		if (from == to) {
			assertThat(next).as("nothing to do").isEqualTo(on);
		}
		if (action == RolloutAction.RESUME && from == State.PAUSED) {
			assertThat(next.judgeAtNanos()).as("a fresh interval").isEqualTo(7 * S + 300 * S);
		}
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			steps 5,5          | steps: [5, 5] (expected: increasing percents)
			steps 50,25        | steps: [50, 25] (expected: increasing percents)
			steps 5,101        | steps: [5, 101] (expected: percents from 1 to 100)
			steps 0            | steps: [0] (expected: percents from 1 to 100)
			interval 999ms     | interval: 999ms (expected: 1s to 7d)
			interval 604801s   | interval: 604801s (expected: 1s to 7d)
			min-requests -1    | min-requests: -1 (expected: 0 to 1000000000)
			min-requests 1000000001 | min-requests: 1000000001 (expected: 0 to 1000000000)
			error increase 2   | max-error-rate-increase: 2.0 (expected: 0 to 1)
			latency ratio 0.9  | max-latency-ratio: 0.9 (expected: 1 to 1000)
			latency ratio 1000.5 | max-latency-ratio: 1000.5 (expected: 1 to 1000)
			latency ratio Infinity | max-latency-ratio: Infinity (expected: 1 to 1000)
			""")
	void rejectsAnInvalidPlanNamingTheKeyAndValue(String plan, String message) {
		int[] steps = { 5, 25 };
		long interval = S;
		long minRequests = 0;
		double increase = 0.01;
		double ratio = 1.5;
		String[] words = plan.split(" ");
		switch (words[0]) {
			case "steps" -> steps = java.util.Arrays.stream(words[1].split(",")).mapToInt(Integer::parseInt).toArray();
			case "interval" -> interval = DurationStyle.SIMPLE.parse(words[1]).toNanos();
			case "min-requests" -> minRequests = Long.parseLong(words[1]);
			case "error" -> increase = Double.parseDouble(words[2]);
			default -> ratio = Double.parseDouble(words[2]);
		}
		int[] chosenSteps = steps;
		long chosenInterval = interval;
		long chosenMin = minRequests;
		double chosenIncrease = increase;
		double chosenRatio = ratio;
		assertThatIllegalArgumentException().isThrownBy(
				() -> new RolloutPlan("canary", chosenSteps, chosenInterval, chosenMin, chosenIncrease, chosenRatio))
			.withMessage(message);
	}

	@Test
	void aShadowStageMovesToTheFirstStepOnceEnoughMirroredAnswersMatch() {
		RolloutPlan plan = new RolloutPlan("canary", new int[] { 5, 50 }, 10_000_000_000L, 100, 0.01, 1.5, null, null,
				0, 0, true, 0.02);
		Rollout.Status status = Rollout.start(plan, 0);
		assertThat(status).isEqualTo(new Rollout.Status(Rollout.State.SHADOWING, 0, 0, 0, null));
		assertThat(Rollout.judgeShadow(plan, status, compared(99, 0, 50), 5).kind()).as("too few")
			.isEqualTo(Judgement.Kind.NOT_DUE);
		Judgement next = Rollout.judgeShadow(plan, status, compared(100, 2, 50), 5);
		assertThat(next.kind()).isEqualTo(Judgement.Kind.NEXT);
		assertThat(next.status()).isEqualTo(new Rollout.Status(Rollout.State.PROGRESSING, 0, 5, 10_000_000_005L, null));
		Judgement back = Rollout.judgeShadow(plan, status, compared(100, 3, 50), 5);
		assertThat(back.kind()).isEqualTo(Judgement.Kind.ROLLED_BACK);
		assertThat(back.status().percent()).isZero();
		assertThat(back.status().reason()).isEqualTo(
				"mismatch rate 0.0300 of 100 compared answers from 50 clients in the shadow stage, without its most"
						+ " differing client (max-mismatch-rate 0.02)");
		assertThat(Rollout.judgeShadow(plan, next.status(), compared(1_000, 1_000, 50), 5).kind())
			.as("no longer shadowing")
			.isEqualTo(Judgement.Kind.NOT_DUE);
		assertThat(Rollout.promote(plan, status).state()).isEqualTo(Rollout.State.PROMOTED);
		assertThat(Rollout.pause(status)).as("nothing to pause").isEqualTo(status);
	}

	@Test
	void twoMismatchesOfOneClientLeaveAShadowStageRunningAtTheDefaults() {
		RolloutPlan plan = new RolloutPlan("canary", new int[] { 5, 50 }, 10_000_000_000L, 100, 0.01, 1.5, null, null,
				RolloutPlan.DEFAULT_MAX_OUTCOMES_PER_CLIENT, RolloutPlan.DEFAULT_MIN_CLIENTS, true,
				RolloutPlan.DEFAULT_MAX_MISMATCH_RATE);
		RolloutTrack track = new RolloutTrack("shop", plan, Rollout.start(plan, 0));
		Rollout.Status status = track.status();
		// 98 matching answers from 98 clients, and two mismatches from a client that
		// sends more: 100 compared answers from 99 clients, 2% differed.
		for (int client = 1; client <= 98; client++) {
			track.shadowAnswered(client, false);
		}
		track.shadowAnswered(4242, true);
		track.shadowAnswered(4242, true);
		Rollout.Window compared = track.shadowCompared();
		assertThat(compared.requests()).isEqualTo(100);
		assertThat(compared.clients()).as("told apart in slots, a few may share one").isBetween(90L, 99L);
		assertThat(compared.topClientErrors()).isEqualTo(2);
		assertThat(Rollout.judgeShadow(plan, status, compared, 5).kind())
			.as("2%, all of one client's: without it, none differed")
			.isEqualTo(Judgement.Kind.NEXT);
		// The same client, past its share (max-outcomes-per-client), counts no more. Its
		// mismatches first: a client that shares its slot (slots are drawn with a seed of
		// the window, so one of the 200 does in about 1 run in 20) then finds the slot
		// full, and the count is exact whatever the seed (9 in a CI run when they came
		// after the others' answers).
		RolloutTrack bounded = new RolloutTrack("shop", plan, Rollout.start(plan, 0));
		for (int i = 0; i < 50; i++) {
			bounded.shadowAnswered(4242, true);
		}
		for (int client = 1; client <= 200; client++) {
			bounded.shadowAnswered(client, false);
		}
		Rollout.Window withOneClient = bounded.shadowCompared();
		assertThat(withOneClient.errors()).as("the client's mismatches, up to its share")
			.isEqualTo(RolloutPlan.DEFAULT_MAX_OUTCOMES_PER_CLIENT);
		assertThat(Rollout.judgeShadow(plan, status, withOneClient, 5).kind()).isEqualTo(Judgement.Kind.NEXT);
		// Differing for everyone: 3 clients of 100 see a mismatch, which no one client
		// explains.
		RolloutTrack failing = new RolloutTrack("shop", plan, Rollout.start(plan, 0));
		for (int client = 1; client <= 100; client++) {
			failing.shadowAnswered(client, client % 33 == 0);
		}
		assertThat(Rollout.judgeShadow(plan, status, failing.shadowCompared(), 5).kind())
			.isEqualTo(Judgement.Kind.ROLLED_BACK);
	}

	@Test
	void aShadowStageWaitsForEnoughClients() {
		RolloutPlan plan = new RolloutPlan("canary", new int[] { 5, 50 }, 10_000_000_000L, 100, 0.01, 1.5, null, null,
				10, 20, true, 0.01);
		Rollout.Status status = Rollout.start(plan, 0);
		assertThat(Rollout.judgeShadow(plan, status, compared(1_000, 1_000, 19), 5).kind())
			.as("one client short of min-clients")
			.isEqualTo(Judgement.Kind.NOT_DUE);
		assertThat(Rollout.judgeShadow(plan, status, compared(1_000, 0, 20), 5).kind()).isEqualTo(Judgement.Kind.NEXT);
	}

	private static Rollout.Window compared(long answers, long differed, long clients) {
		return new Rollout.Window(answers, differed, 0, clients);
	}

	@Test
	void aBlockWithoutAShadowStageKeepsItsIdAndFingerprint() {
		RolloutPlan before = new RolloutPlan("canary", new int[] { 5, 50 }, 10_000_000_000L, 100, 0.01, 1.5, null, null,
				10, 20);
		RolloutPlan shadowed = new RolloutPlan("canary", new int[] { 5, 50 }, 10_000_000_000L, 100, 0.01, 1.5, null,
				null, 10, 20, true, 0.01);
		assertThat(before.shadow()).isFalse();
		assertThat(before.fingerprint()).doesNotContain("shadow");
		assertThat(shadowed.id()).isNotEqualTo(before.id());
		assertThat(Rollout.start(before, 0).state()).isEqualTo(Rollout.State.PROGRESSING);
	}

}
