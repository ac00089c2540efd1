package dev.gatewaylb.gateway.runtime;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.split.Rollout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rollout registry across refreshes, on a clock the test moves: a kept rollout is the
 * same rollout and is recognised by the new settings' plan; a changed block starts again;
 * a rollout is recognised only by its own plan, so that a request racing a refresh never
 * pairs new layouts with an old rollout's position.
 */
class SplitRolloutsTests {

	private static final long SECOND = 1_000_000_000L;

	private final AtomicLong clock = new AtomicLong(SECOND);

	private SplitRollouts rollouts;

	@AfterEach
	void stop() {
		if (this.rollouts != null) {
			this.rollouts.stop();
		}
	}

	@Test
	void keepsARolloutWhoseBlockIsUnchangedAndRestartsOneWhoseBlockChanged() {
		LiveSettings settings = new LiveSettings(settings(100, "50,100"));
		this.rollouts = new SplitRollouts(settings, this.clock::get, () -> 0L, () -> FleetDecisions.NONE);
		this.rollouts.start();
		this.rollouts.sync();
		SplitRollouts.Track started = this.rollouts.track("shop");
		assertThat(started.status().state()).isEqualTo(Rollout.State.PROGRESSING);
		assertThat(started.layout()).isZero();
		this.rollouts.act("shop", SplitRollouts.Action.PROMOTE);
		assertThat(started.layout()).isEqualTo(1);

		GatewayLbSettings weightsChanged = settings(90, "50,100");
		Rollout.Plan keptPlan = weightsChanged.split("shop").rollout();
		assertThat(started.isOf(keptPlan)).as("an equal plan, before the thread applied it").isTrue();
		assertThat(this.rollouts.track(weightsChanged.split("shop"))).isSameAs(started);
		settings.apply(weightsChanged);
		this.rollouts.sync();
		assertThat(this.rollouts.track("shop")).isSameAs(started);
		assertThat(started.plan()).isSameAs(keptPlan);
		assertThat(started.status().state()).isEqualTo(Rollout.State.PROMOTED);

		GatewayLbSettings blockChanged = settings(90, "10,50,100");
		Rollout.Plan newPlan = blockChanged.split("shop").rollout();
		assertThat(started.isOf(newPlan)).as("another plan is not this rollout").isFalse();
		assertThat(this.rollouts.track(blockChanged.split("shop")))
			.as("the new settings' requests take their first step until the thread restarts the rollout")
			.isNull();
		settings.apply(blockChanged);
		this.rollouts.sync();
		SplitRollouts.Track restarted = this.rollouts.track("shop");
		assertThat(restarted).isNotSameAs(started);
		assertThat(this.rollouts.track(blockChanged.split("shop"))).isSameAs(restarted);
		assertThat(restarted.status().percent()).isEqualTo(10);
		assertThat(restarted.verdicts()).last()
			.extracting(SplitRollouts.Verdict::reason)
			.isEqualTo("the rollout block changed");
		assertThat(this.rollouts.transitions("shop", Rollout.State.PROGRESSING)).as("two starts").isEqualTo(2);
		assertThat(this.rollouts.transitions("shop", Rollout.State.PROMOTED)).isEqualTo(1);
	}

	@Test
	void holdsAStepWithoutEnoughRequestsAndForgetsARolloutWhoseBlockWasRemoved() {
		LiveSettings settings = new LiveSettings(settings(100, "50,100"));
		this.rollouts = new SplitRollouts(settings, this.clock::get, () -> 0L, () -> FleetDecisions.NONE);
		this.rollouts.start();
		this.rollouts.sync();
		this.clock.addAndGet(61 * SECOND);
		// The thread ticks four times a second: wait for a judgement, on the test's
		// clock.
		org.awaitility.Awaitility.await()
			.atMost(java.time.Duration.ofSeconds(5))
			.until(() -> this.rollouts.track("shop").verdicts().size() == 2);
		SplitRollouts.Track track = this.rollouts.track("shop");
		assertThat(track.verdicts()).last().extracting(SplitRollouts.Verdict::verdict).isEqualTo("hold");
		assertThat(track.status().step()).isZero();
		assertThat(track.window(true)).as("a held step goes on recording").isNotNull();

		settings.apply(settings(100, null));
		this.rollouts.sync();
		assertThat(this.rollouts.track("shop")).isNull();
		assertThat(this.rollouts.percent("shop")).isNaN();
	}

	@Test
	void tellsTheFleetItsOwnDecisionsAndFollowsOthersAboutTheSamePlanOnly() {
		LiveSettings settings = new LiveSettings(settings(100, "50,100"));
		List<String> told = new CopyOnWriteArrayList<>();
		FleetDecisions fleet = new FleetDecisions() {

			@Override
			public void rollout(String split, String plan, SplitRollouts.Action action, String reason) {
				told.add(split + " " + action.label() + " " + reason + " " + plan);
			}

			@Override
			public void drain(String service, String endpoint, boolean drain) {
			}

		};
		this.rollouts = new SplitRollouts(settings, this.clock::get, () -> 0L, () -> fleet);
		this.rollouts.start();
		this.rollouts.sync();
		String plan = settings.get().split("shop").rollout().fingerprint();
		this.rollouts.act("shop", SplitRollouts.Action.PAUSE);
		assertThat(told).containsExactly("shop pause by an operator " + plan);

		this.rollouts.follow("shop", "another block", SplitRollouts.Action.ROLL_BACK, "error rate", "replica-2");
		this.rollouts.sync();
		assertThat(this.rollouts.track("shop").status().state()).as("another plan").isEqualTo(Rollout.State.PAUSED);

		this.rollouts.follow("shop", plan, SplitRollouts.Action.ROLL_BACK, "error rate 0.5", "replica-2");
		this.rollouts.sync();
		Rollout.Status followed = this.rollouts.track("shop").status();
		assertThat(followed.state()).isEqualTo(Rollout.State.ROLLED_BACK);
		assertThat(followed.reason()).isEqualTo("rolled back by replica-2: error rate 0.5");
		assertThat(told).as("a followed decision is told to nobody").hasSize(1);
	}

	private static GatewayLbSettings settings(int stableWeight, String steps) {
		Map<String, Object> values = new HashMap<>();
		values.put("gateway.lb.splits.shop.targets.shop-stable", stableWeight);
		values.put("gateway.lb.splits.shop.targets.shop-canary", 0);
		if (steps != null) {
			values.put("gateway.lb.splits.shop.rollout.target", "shop-canary");
			values.put("gateway.lb.splits.shop.rollout.steps", steps);
			values.put("gateway.lb.splits.shop.rollout.interval", "1m");
		}
		MockEnvironment environment = new MockEnvironment();
		values.forEach((key, value) -> environment.setProperty(key, String.valueOf(value)));
		return GatewayLbSettings.bind(environment);
	}

}
