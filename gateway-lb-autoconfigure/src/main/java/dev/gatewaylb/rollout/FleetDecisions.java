package dev.gatewaylb.rollout;

import org.jspecify.annotations.Nullable;

/**
 * Where a replica tells the rest of its fleet what it decided on its own: a rollout it
 * rolled back or promoted, an operator's rollout action, an endpoint drained through the
 * actuator. Without a fleet channel (Spring Cloud Bus) nobody listens and every replica
 * acts alone.
 */
public interface FleetDecisions {

	/**
	 * Tells nobody.
	 */
	FleetDecisions NONE = new FleetDecisions() {

		@Override
		public void rollout(String split, String plan, RolloutAction action, @Nullable String reason,
				boolean byOperator) {
		}

		@Override
		public void drain(String service, String endpoint, boolean drain, boolean force) {
		}

	};

	/**
	 * A rollout decision taken here.
	 * @param split the split's name
	 * @param plan the rollout's plan's fingerprint (its steps, interval and thresholds in
	 * one word), so that a replica with another rollout block ignores it
	 * @param action what the other replicas should do
	 * @param reason why, as this replica's actuator shows it
	 * @param byOperator whether an operator asked for it (a judgement's decision
	 * otherwise): only an operator's roll-back undoes a promotion
	 */
	void rollout(String split, String plan, RolloutAction action, @Nullable String reason, boolean byOperator);

	/**
	 * Returns whether a replica that starts asks its peers for the fleet's state of each
	 * rollout before running it: then its rollouts start paused on their first step until
	 * the first peer answers, or for one interval when none does.
	 * @return {@code false} unless there is a fleet to ask
	 */
	default boolean asksPeersOnStart() {
		return false;
	}

	/**
	 * An endpoint drained, or brought back, through this replica's actuator.
	 * @param service the service id
	 * @param endpoint the endpoint's {@code host:port}
	 * @param drain whether it drains
	 * @param force whether the operator drained it beyond
	 * {@code health.max-drain-percent}
	 */
	void drain(String service, String endpoint, boolean drain, boolean force);

}
