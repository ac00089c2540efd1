package dev.gatewaylb.internal.rollout;

import dev.gatewaylb.rollout.RolloutAction;

/**
 * What one decision about a rollout was, as its verdicts show it.
 */
public enum VerdictKind {

	/**
	 * Settings brought or changed the rollout block: on the first step.
	 */
	STARTED("started"),

	/**
	 * Too few canary requests: the step stays.
	 */
	HOLD("hold"),

	/**
	 * On to the next step.
	 */
	NEXT("next"),

	/**
	 * Promoted, by a judgement or an action.
	 */
	PROMOTED("promoted"),

	/**
	 * Rolled back, by a judgement or an action.
	 */
	ROLLED_BACK("rolled-back"),

	/**
	 * Paused by an action.
	 */
	PAUSED("paused"),

	/**
	 * Resumed by an action.
	 */
	RESUMED("resumed");

	private final String label;

	VerdictKind(String label) {
		this.label = label;
	}

	/**
	 * Returns the verdict as the actuator shows it.
	 * @return the label, such as {@code rolled-back}
	 */
	public String label() {
		return this.label;
	}

	/**
	 * Returns the verdict of a judgement that was due.
	 * @param kind the judgement's decision
	 * @return the verdict kind
	 * @throws IllegalArgumentException for {@link Judgement.Kind#NOT_DUE}, which is no
	 * verdict
	 */
	static VerdictKind of(Judgement.Kind kind) {
		return switch (kind) {
			case HOLD -> HOLD;
			case NEXT -> NEXT;
			case PROMOTED -> PROMOTED;
			case ROLLED_BACK -> ROLLED_BACK;
			case NOT_DUE -> throw new IllegalArgumentException("kind: NOT_DUE (expected: a judgement that was due)");
		};
	}

	/**
	 * Returns the verdict an operator's or a peer's action gives.
	 * @param action the action
	 * @return its verdict
	 */
	public static VerdictKind of(RolloutAction action) {
		return switch (action) {
			case PAUSE -> PAUSED;
			case RESUME -> RESUMED;
			case PROMOTE -> PROMOTED;
			case ROLL_BACK -> ROLLED_BACK;
		};
	}

	/**
	 * Returns the verdict of a rollout that took a peer's state.
	 * @param state the state it took
	 * @return the verdict
	 */
	static VerdictKind adopting(Rollout.State state) {
		return switch (state) {
			case SHADOWING, PROGRESSING -> RESUMED;
			case PAUSED -> PAUSED;
			case PROMOTED -> PROMOTED;
			case ROLLED_BACK -> ROLLED_BACK;
		};
	}

}
