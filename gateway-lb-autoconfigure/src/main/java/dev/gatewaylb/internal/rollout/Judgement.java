package dev.gatewaylb.internal.rollout;

import java.util.Objects;

/**
 * What a judgement of a rollout decided ({@link Rollout#judge}).
 *
 * @param kind the decision
 * @param status where the rollout stands after it
 */
public record Judgement(Kind kind, Rollout.Status status) {

	public Judgement {
		Objects.requireNonNull(kind, "kind");
		Objects.requireNonNull(status, "status");
	}

	/**
	 * A judgement's decision.
	 */
	public enum Kind {

		/**
		 * Nothing judged: not progressing, or the step's interval has not passed.
		 */
		NOT_DUE,

		/**
		 * Too few canary requests: the step stays, its counts go on accumulating, and it
		 * is judged again an interval later.
		 */
		HOLD,

		/**
		 * The canary did well: on to the next step.
		 */
		NEXT,

		/**
		 * The canary did well on the last step: promoted.
		 */
		PROMOTED,

		/**
		 * The canary did worse than the other targets: rolled back.
		 */
		ROLLED_BACK

	}

}
