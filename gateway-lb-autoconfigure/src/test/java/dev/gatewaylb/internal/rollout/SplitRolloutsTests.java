package dev.gatewaylb.internal.rollout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.control.ManualControlThread;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.rollout.RolloutAction;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rollout runner on a control thread and a clock the test drives: the tick judges a
 * step once its interval has passed and not before; a held step goes on counting; a
 * failing canary is rolled back and the fleet told; the last step is promoted; a paused
 * rollout records nothing and resumes with a fresh interval. Across new plans: a kept
 * rollout is the same rollout and is recognised by the new plan; a changed plan starts
 * again; a rollout is recognised only by its own plan, so that a request racing a refresh
 * never pairs new layouts with an old rollout's position.
 */
class SplitRolloutsTests {

	private static final long SECOND = 1_000_000_000L;

	private static final Duration INTERVAL = Duration.ofMinutes(1);

	private final AtomicLong clock = new AtomicLong(SECOND);

	private final ManualControlThread control = new ManualControlThread(this.clock);

	private final List<String> told = new CopyOnWriteArrayList<>();

	/**
	 * Whether the fleet is asked on start: as with the bus.
	 */
	private boolean fleet;

	private final SplitRollouts rollouts = new SplitRollouts(this.control, () -> 42L, () -> new FleetDecisions() {

		@Override
		public void rollout(String split, String plan, RolloutAction action, @Nullable String reason,
				boolean byOperator) {
			SplitRolloutsTests.this.told.add(split + " " + action.label() + " " + reason);
		}

		@Override
		public boolean asksPeersOnStart() {
			return SplitRolloutsTests.this.fleet;
		}

		@Override
		public void drain(String service, String endpoint, boolean drain, boolean force) {
		}

	});

	@Test
	void judgesAStepOnlyOnceItsIntervalHasPassedAndMovesOnWhenTheCanaryDidWell() {
		RolloutTrack track = start(plan(10, 50, 100));
		answer(track, 10, 0, 90, 0);
		this.control.advance(INTERVAL.minus(SplitRollouts.TICK));
		assertThat(track.status().step()).as("not due").isZero();
		assertThat(track.current().canary().requests()).as("drained by each tick").isEqualTo(10);
		this.control.advance(SplitRollouts.TICK);
		assertThat(track.status().step()).isEqualTo(1);
		assertThat(track.status().percent()).isEqualTo(50);
		assertThat(track.layout()).isEqualTo(1);
		assertThat(kinds(track)).containsExactly(VerdictKind.STARTED, VerdictKind.NEXT);
		Verdict next = track.verdicts().get(1);
		assertThat(next.step()).as("the step judged").isZero();
		assertThat(next.canary().requests()).isEqualTo(10);
		assertThat(next.others().requests()).isEqualTo(90);
		assertThat(next.atMillis()).isEqualTo(42);
		this.control.advance(SplitRollouts.TICK);
		assertThat(track.current().canary().requests()).as("a new step counts afresh").isZero();
		assertThat(this.rollouts.transitions("shop", Rollout.State.PROGRESSING)).as("start and step").isEqualTo(2);
	}

	@Test
	void holdsAStepWithTooFewCanaryRequestsAndJudgesItAgainAnIntervalLaterWithTheCountsSoFar() {
		RolloutTrack track = start(plan(10, 50, 100));
		answer(track, 9, 0, 90, 0);
		this.control.advance(INTERVAL);
		assertThat(kinds(track)).last().isEqualTo(VerdictKind.HOLD);
		assertThat(track.status().step()).isZero();
		assertThat(track.window(true)).as("a held step goes on recording").isNotNull();
		answer(track, 1, 0, 10, 0);
		this.control.advance(INTERVAL);
		assertThat(kinds(track)).containsExactly(VerdictKind.STARTED, VerdictKind.HOLD, VerdictKind.NEXT);
		assertThat(track.verdicts().get(2).canary().requests()).as("both intervals' counts").isEqualTo(10);
	}

	@Test
	void rollsBackACanaryThatFailsMoreThanTheOthersAndTellsTheFleet() {
		RolloutTrack track = start(plan(10, 50, 100));
		answer(track, 10, 5, 90, 0);
		this.control.advance(INTERVAL);
		assertThat(track.status().state()).isEqualTo(Rollout.State.ROLLED_BACK);
		assertThat(track.status().percent()).isZero();
		assertThat(track.layout()).as("the layout with the target at 0%").isEqualTo(3);
		assertThat(track.window(true)).as("an ended rollout records nothing").isNull();
		assertThat(kinds(track)).last().isEqualTo(VerdictKind.ROLLED_BACK);
		assertThat(this.told).singleElement().asString().startsWith("shop roll-back error rate 0.4444 against 0.0000");
		this.control.advance(INTERVAL.multipliedBy(10));
		assertThat(track.verdicts()).as("never judged again").hasSize(2);
	}

	@Test
	void promotesAfterTheLastStepAndTellsTheFleet() {
		RolloutTrack track = start(plan(10, 100));
		answer(track, 10, 0, 90, 0);
		this.control.advance(INTERVAL);
		answer(track, 100, 0, 0, 0);
		this.control.advance(INTERVAL);
		assertThat(track.status().state()).isEqualTo(Rollout.State.PROMOTED);
		assertThat(track.status().percent()).isEqualTo(100);
		assertThat(kinds(track)).containsExactly(VerdictKind.STARTED, VerdictKind.NEXT, VerdictKind.PROMOTED);
		assertThat(this.told).containsExactly("shop promote promoted");
		assertThat(this.rollouts.transitions("shop", Rollout.State.PROMOTED)).isOne();
	}

	@Test
	void aPausedRolloutRecordsNothingIsNotJudgedAndResumesWithAFreshInterval() {
		RolloutTrack track = start(plan(10, 50, 100));
		this.control.advance(INTERVAL.dividedBy(2));
		assertThat(this.rollouts.act("SHOP", RolloutAction.PAUSE)).as("any case").isSameAs(track);
		assertThat(track.window(true)).isNull();
		this.control.advance(INTERVAL.multipliedBy(5));
		assertThat(kinds(track)).containsExactly(VerdictKind.STARTED, VerdictKind.PAUSED);
		this.rollouts.act("shop", RolloutAction.RESUME);
		answer(track, 10, 0, 90, 0);
		this.control.advance(INTERVAL.minus(SplitRollouts.TICK));
		assertThat(track.status().step()).as("the interval starts at the resumption").isZero();
		this.control.advance(SplitRollouts.TICK);
		assertThat(track.status().step()).isEqualTo(1);
		assertThat(kinds(track)).containsExactly(VerdictKind.STARTED, VerdictKind.PAUSED, VerdictKind.RESUMED,
				VerdictKind.NEXT);
		assertThat(this.told).containsExactly("shop pause by an operator", "shop resume by an operator");
		assertThat(this.rollouts.act("shop", RolloutAction.RESUME)).as("resuming a progressing rollout")
			.isSameAs(track);
		assertThat(track.verdicts()).as("changes nothing").hasSize(4);
		assertThat(this.rollouts.act("other", RolloutAction.PAUSE)).isNull();
	}

	@Test
	void keepsARolloutWhosePlanIsUnchangedAndRestartsOneWhosePlanChanged() {
		RolloutTrack started = start(plan(50, 100));
		assertThat(started.status().state()).isEqualTo(Rollout.State.PROGRESSING);
		assertThat(started.layout()).isZero();
		this.rollouts.act("shop", RolloutAction.PROMOTE);
		assertThat(started.layout()).isEqualTo(1);

		RolloutPlan keptPlan = plan(50, 100);
		assertThat(started.isOf(keptPlan)).as("an equal plan, before the thread applied it").isTrue();
		assertThat(this.rollouts.track("shop", keptPlan)).isSameAs(started);
		this.rollouts.plans(Map.of("shop", keptPlan));
		this.control.runDue();
		assertThat(this.rollouts.track("shop")).isSameAs(started);
		assertThat(started.plan()).isSameAs(keptPlan);
		assertThat(started.status().state()).isEqualTo(Rollout.State.PROMOTED);

		RolloutPlan newPlan = plan(10, 50, 100);
		assertThat(started.isOf(newPlan)).as("another plan is not this rollout").isFalse();
		assertThat(this.rollouts.track("shop", newPlan))
			.as("the new settings' requests take their first step until the thread restarts the rollout")
			.isNull();
		this.rollouts.plans(Map.of("shop", newPlan));
		this.control.runDue();
		RolloutTrack restarted = this.rollouts.track("shop");
		assertThat(restarted).isNotSameAs(started);
		assertThat(this.rollouts.track("shop", newPlan)).isSameAs(restarted);
		assertThat(restarted.status().percent()).isEqualTo(10);
		assertThat(restarted.verdicts()).last().extracting(Verdict::reason).isEqualTo("the rollout block changed");
		assertThat(this.rollouts.transitions("shop", Rollout.State.PROGRESSING)).as("two starts").isEqualTo(2);
		assertThat(this.rollouts.transitions("shop", Rollout.State.PROMOTED)).isEqualTo(1);
		assertThat(this.rollouts.track("shop", null)).as("no plan, no rollout").isNull();
	}

	@Test
	void forgetsARolloutWhosePlanWasRemoved() {
		start(plan(50, 100));
		this.rollouts.plans(Map.of());
		this.control.runDue();
		assertThat(this.rollouts.track("shop")).isNull();
		assertThat(this.rollouts.percent("shop")).isNaN();
		assertThat(this.rollouts.transitions("shop", Rollout.State.PROGRESSING)).isZero();
	}

	@Test
	void followsOtherReplicasAboutTheSamePlanOnlyAndTellsNobody() {
		RolloutPlan plan = plan(50, 100);
		RolloutTrack track = start(plan);
		this.rollouts.follow("shop", "another block", RolloutAction.ROLL_BACK, "error rate", "replica-2", false);
		this.control.runDue();
		assertThat(track.status().state()).as("another plan").isEqualTo(Rollout.State.PROGRESSING);

		this.rollouts.follow("shop", plan.fingerprint(), RolloutAction.ROLL_BACK, "error rate 0.5", "replica-2", false);
		this.control.runDue();
		assertThat(track.status().state()).isEqualTo(Rollout.State.ROLLED_BACK);
		assertThat(track.status().reason()).isEqualTo("rolled back by replica-2: error rate 0.5");
		assertThat(this.told).as("a followed decision is told to nobody").isEmpty();
	}

	@Test
	void aPeersReasonCannotBreakALogLine() {
		RolloutPlan plan = plan(50, 100);
		RolloutTrack track = start(plan);
		this.rollouts.follow("shop", plan.fingerprint(), RolloutAction.ROLL_BACK,
				"error rate\n2026-12-06T07:00:00Z INFO forged line", "replica-2", false);
		this.control.runDue();
		assertThat(track.status().reason())
			.isEqualTo("rolled back by replica-2: error rate\\u000a2026-12-06T07:00:00Z INFO forged line")
			.doesNotContain("\n");
	}

	@Test
	void aJudgementsRollBackFromAnotherReplicaNeverUndoesAPromotionAndAnOperatorsDoes() {
		RolloutPlan plan = plan(50, 100);
		RolloutTrack track = start(plan);
		this.rollouts.act("shop", RolloutAction.PROMOTE);
		assertThat(track.status().state()).isEqualTo(Rollout.State.PROMOTED);
		// A replica that judged its few requests late, or a stale event.
		this.rollouts.follow("shop", plan.fingerprint(), RolloutAction.ROLL_BACK, "error rate 1.0", "replica-2", false);
		this.control.runDue();
		assertThat(track.status().state()).isEqualTo(Rollout.State.PROMOTED);
		assertThat(track.status().percent()).isEqualTo(100);
		this.rollouts.follow("shop", plan.fingerprint(), RolloutAction.ROLL_BACK, "by an operator", "replica-2", true);
		this.control.runDue();
		assertThat(track.status().state()).isEqualTo(Rollout.State.ROLLED_BACK);
	}

	@Test
	void aRolloutIdIsAnEpochOfItsOwn() {
		RolloutPlan first = plan(50, 100);
		RolloutPlan again = new RolloutPlan("shop-canary", new int[] { 50, 100 }, INTERVAL.toNanos(), 10, 0.1, 2,
				"shop-2", null, 0, 0);
		assertThat(first.id()).as("derived: the same for the same keys").isEqualTo(plan(50, 100).id()).hasSize(16);
		assertThat(plan(50, 90).id()).isNotEqualTo(first.id());
		assertThat(again.fingerprint()).startsWith("shop-2 ").isNotEqualTo(first.fingerprint());
		assertThat(again).isNotEqualTo(first);
		RolloutTrack track = start(again);
		this.rollouts.follow("shop", first.fingerprint(), RolloutAction.ROLL_BACK, "error rate 1.0", "replica-2",
				false);
		this.control.runDue();
		assertThat(track.status().state()).as("a decision of the earlier epoch").isEqualTo(Rollout.State.PROGRESSING);
	}

	@Test
	void withAFleetARolloutStartsPausedOnItsFirstStepAndTakesTheFirstPeersState() {
		this.fleet = true;
		RolloutPlan plan = plan(10, 50, 100);
		RolloutTrack track = start(plan);
		assertThat(track.awaitsPeers()).isTrue();
		assertThat(track.status().state()).isEqualTo(Rollout.State.PAUSED);
		assertThat(track.window(true)).as("nothing judged while waiting").isNull();
		assertThat(this.rollouts.peerStates()).as("a waiting replica has nothing to tell").isEmpty();

		this.rollouts.peersAnswered(List.of(new PeerState("SHOP", plan.fingerprint(), Rollout.State.PROMOTED, 2, null)),
				"replica-1");
		this.control.runDue();
		assertThat(track.awaitsPeers()).isFalse();
		assertThat(track.status().state()).isEqualTo(Rollout.State.PROMOTED);
		assertThat(track.status().percent()).isEqualTo(100);
		assertThat(track.layout()).isEqualTo(2);
		assertThat(track.verdicts()).last()
			.satisfies((verdict) -> assertThat(verdict.reason()).isEqualTo("as replica-1 has it"));
		assertThat(this.rollouts.peerStates())
			.containsExactly(new PeerState("shop", plan.fingerprint(), Rollout.State.PROMOTED, 2, null));

		this.rollouts.peersAnswered(
				List.of(new PeerState("shop", plan.fingerprint(), Rollout.State.PROGRESSING, 0, null)), "replica-3");
		this.control.runDue();
		assertThat(track.status().state()).as("only the first answer is taken").isEqualTo(Rollout.State.PROMOTED);
	}

	@Test
	void aWaitingRolloutTakesAPeersStepWithAFreshIntervalOrItsRollBack() {
		this.fleet = true;
		RolloutPlan plan = plan(10, 50, 100);
		RolloutTrack track = start(plan);
		this.rollouts.peersAnswered(
				List.of(new PeerState("shop", plan.fingerprint(), Rollout.State.PROGRESSING, 1, null)), "replica-1");
		this.control.runDue();
		assertThat(track.status().state()).isEqualTo(Rollout.State.PROGRESSING);
		assertThat(track.status().percent()).isEqualTo(50);
		assertThat(track.status().judgeAtNanos()).isEqualTo(this.clock.get() + INTERVAL.toNanos());
		assertThat(track.window(true)).as("judged from now on").isNotNull();

		this.rollouts.plans(Map.of("shop", plan(20, 100)));
		this.control.runDue();
		assertThat(this.rollouts.track("shop").awaitsPeers()).as("only the rollouts of the start-up wait").isFalse();

		SplitRollouts restarted = new SplitRollouts(this.control, () -> 42L, SplitRolloutsTests::askingFleet);
		restarted.plans(Map.of("shop", plan));
		this.control.runDue();
		restarted.peersAnswered(List
			.of(new PeerState("shop", plan.fingerprint(), Rollout.State.ROLLED_BACK, 1, "rolled back by an operator")),
				"replica-1");
		this.control.runDue();
		RolloutTrack rolledBack = restarted.track("shop");
		assertThat(rolledBack.status().state()).isEqualTo(Rollout.State.ROLLED_BACK);
		assertThat(rolledBack.status().percent()).isZero();
		assertThat(rolledBack.status().reason())
			.isEqualTo("rolled back as replica-1 has it: rolled back by an operator");
	}

	@Test
	void aWaitingRolloutStartsOnItsFirstStepWhenNoPeerAnswersInAnIntervalOrThePeerHasNoSuchRollout() {
		this.fleet = true;
		this.rollouts.start();
		RolloutPlan plan = plan(10, 50, 100);
		RolloutPlan other = new RolloutPlan("shop-canary", new int[] { 10, 100 }, INTERVAL.toNanos(), 10, 0.1, 2);
		this.rollouts.plans(Map.of("shop", plan, "web", other));
		this.control.runDue();
		this.rollouts.peersAnswered(List.of(), "replica-1");
		this.control.runDue();
		RolloutTrack shop = this.rollouts.track("shop");
		assertThat(shop.status().state()).isEqualTo(Rollout.State.PROGRESSING);
		assertThat(shop.status().step()).isZero();
		assertThat(shop.verdicts()).last()
			.satisfies((verdict) -> assertThat(verdict.reason()).startsWith("replica-1 has no such rollout"));

		SplitRollouts alone = new SplitRollouts(this.control, () -> 42L, SplitRolloutsTests::askingFleet);
		alone.start();
		alone.plans(Map.of("shop", plan));
		this.control.runDue();
		this.control.advance(INTERVAL.minus(SplitRollouts.TICK));
		assertThat(alone.track("shop").awaitsPeers()).isTrue();
		this.control.advance(SplitRollouts.TICK);
		assertThat(alone.track("shop").awaitsPeers()).isFalse();
		assertThat(alone.track("shop").status().state()).isEqualTo(Rollout.State.PROGRESSING);
		assertThat(alone.track("shop").verdicts()).last()
			.satisfies((verdict) -> assertThat(verdict.reason()).startsWith("no peer told its state"));
	}

	@Test
	void judgesOnANamedJobOfItsOwn() {
		this.rollouts.start();
		this.rollouts.start();
		assertThat(this.control.jobs()).containsExactly("rollout-tick every 250ms");
	}

	/**
	 * A fleet that tells nobody but is asked on start, for a second replica.
	 */
	private static FleetDecisions askingFleet() {
		return new FleetDecisions() {

			@Override
			public void rollout(String split, String plan, RolloutAction action, @Nullable String reason,
					boolean byOperator) {
			}

			@Override
			public void drain(String service, String endpoint, boolean drain, boolean force) {
			}

			@Override
			public boolean asksPeersOnStart() {
				return true;
			}

		};
	}

	private RolloutTrack start(RolloutPlan plan) {
		this.rollouts.start();
		this.rollouts.plans(Map.of("shop", plan));
		this.control.runDue();
		RolloutTrack track = this.rollouts.track("shop", plan);
		assertThat(track).isNotNull();
		return track;
	}

	/**
	 * A plan of 10 canary requests per interval at least, a 10% error increase at most,
	 * twice the others' p99 at most.
	 */
	private static RolloutPlan plan(int... steps) {
		return new RolloutPlan("shop-canary", steps, INTERVAL.toNanos(), 10, 0.1, 2);
	}

	/**
	 * Records answers on both sides, as requests would: 10 ms each, the failures with no
	 * latency.
	 */
	private static void answer(RolloutTrack track, int canary, int canaryFailures, int others, int otherFailures) {
		record(track.window(true), canary, canaryFailures);
		record(track.window(false), others, otherFailures);
	}

	private static void record(@Nullable RolloutWindow window, int answers, int failures) {
		assertThat(window).as("the step records").isNotNull();
		for (int i = 0; i < answers; i++) {
			if (i < failures) {
				window.failed(i);
			}
			else {
				window.succeeded(i, 10_000_000L);
			}
		}
	}

	private static List<VerdictKind> kinds(RolloutTrack track) {
		return track.verdicts().stream().map(Verdict::kind).toList();
	}

}
