package dev.gatewaylb.internal.rollout;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A rollout as a peer has it: what a replica that starts takes instead of the first step.
 *
 * @param split the split's name as configured
 * @param plan the plan's fingerprint, with its id
 * @param state where it stands
 * @param step the step in force
 * @param reason why it was rolled back, or {@code null}
 */
public record PeerState(String split, String plan, Rollout.State state, int step, @Nullable String reason) {

	public PeerState {
		Objects.requireNonNull(split, "split");
		Objects.requireNonNull(plan, "plan");
		Objects.requireNonNull(state, "state");
	}

	/**
	 * Returns the status a rollout that waited for its peers takes from this one: the
	 * same step, paused, promoted or rolled back; a progressing step judged a fresh
	 * interval from now; a shadow stage started again (its compared answers are each
	 * replica's).
	 * @param plan the rollout's plan, the peer's (same fingerprint)
	 * @param nowNanos the control thread's clock
	 * @param by who it is taken from, for a roll-back's reason
	 * @return the status
	 */
	Rollout.Status adopted(RolloutPlan plan, long nowNanos, String by) {
		int step = Math.max(0, Math.min(this.step, plan.lastStep()));
		int percent = plan.step(step);
		return switch (this.state) {
			case SHADOWING -> Rollout.start(plan, nowNanos);
			case PROGRESSING ->
				new Rollout.Status(Rollout.State.PROGRESSING, step, percent, nowNanos + plan.intervalNanos(), null);
			case PAUSED -> new Rollout.Status(Rollout.State.PAUSED, step, percent, 0, null);
			case PROMOTED ->
				new Rollout.Status(Rollout.State.PROMOTED, plan.lastStep(), plan.step(plan.lastStep()), 0, null);
			case ROLLED_BACK -> new Rollout.Status(Rollout.State.ROLLED_BACK, step, 0, 0,
					"rolled back " + by + ((this.reason != null) ? ": " + this.reason : ""));
		};
	}

}
