package dev.gatewaylb.rollout;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * What an operator may ask of a rollout, and what one replica tells the others it did.
 */
public enum RolloutAction {

	/**
	 * Stay on the step, unjudged.
	 */
	PAUSE,

	/**
	 * Judge the step again, after a fresh interval.
	 */
	RESUME,

	/**
	 * Give the target its last step's share now.
	 */
	PROMOTE,

	/**
	 * Give the target no share now.
	 */
	ROLL_BACK;

	/**
	 * Returns the action a request names: {@code pause}, {@code resume}, {@code promote},
	 * {@code roll-back}.
	 * @param name the name, in any case
	 * @return the action, or {@code null} for no such action
	 */
	public static @Nullable RolloutAction of(@Nullable String name) {
		if (name == null) {
			return null;
		}
		for (RolloutAction action : values()) {
			if (action.label().equalsIgnoreCase(name.trim())) {
				return action;
			}
		}
		return null;
	}

	/**
	 * Returns the action's name in requests and bus events.
	 * @return the name, such as {@code roll-back}
	 */
	public String label() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
