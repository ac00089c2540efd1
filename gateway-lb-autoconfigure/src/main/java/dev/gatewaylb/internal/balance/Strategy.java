package dev.gatewaylb.internal.balance;

import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * One algorithm bound to one snapshot's members. Implementations are immutable apart from
 * atomics, take no lock and allocate nothing per selection.
 */
interface Strategy {

	/**
	 * Returns the index of the selected endpoint, or -1 when no endpoint can be picked
	 * (the set is empty or every weight is 0).
	 * @param key the consistent-hash key, or {@code null}
	 */
	int select(@Nullable CharSequence key);

	static Strategy create(Algorithm algorithm, Members members, AtomicLong roundRobinTicket) {
		return switch (algorithm) {
			case ROUND_ROBIN -> new SmoothWeightedRoundRobin(members, roundRobinTicket);
			case LEAST_REQUESTS -> new LeastRequests(members);
			case POWER_OF_TWO_CHOICES -> new PowerOfTwoChoices(members, false);
			case CONSISTENT_HASH -> new KetamaRing(members, new SmoothWeightedRoundRobin(members, roundRobinTicket));
			case PEAK_EWMA -> new PowerOfTwoChoices(members, true);
		};
	}

}
