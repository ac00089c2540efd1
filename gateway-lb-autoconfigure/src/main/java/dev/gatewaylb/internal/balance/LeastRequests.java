package dev.gatewaylb.internal.balance;

import org.jspecify.annotations.Nullable;

/**
 * Selects the endpoint with the fewest requests in flight; ties go to the lowest index.
 * In-flight counts 0,2,1 select {@code a}; 3,1,1 select {@code b}.
 * <p>
 * A full scan by definition: one volatile read per endpoint, through an array of the
 * eligible endpoints' states; it stops at the first idle endpoint, which nothing can beat
 * and no later endpoint can tie. Weights do not enter the comparison (the algorithm
 * balances observed load, not configured shares); slow start does: a ramping endpoint at
 * factor f counts as {@code (inFlight + 1) / f}, so a newcomer at 10% looks ten times as
 * busy as an idle peer. The counts are read without a common instant, so two concurrent
 * picks may both choose the same idle endpoint; the next picks see both requests.
 * <p>
 * With weights from the endpoints' load reports ({@link Balancer#loadWeights}), the count
 * is weighed: the lowest {@code (inFlight + 1) / weight} wins, so at equal counts the
 * endpoint that reports less load wins, and at equal reports the one with fewer requests.
 */
final class LeastRequests implements Strategy {

	private final Members members;

	LeastRequests(Members members) {
		this.members = members;
	}

	@Override
	public int select(@Nullable CharSequence key) {
		int[] eligible = this.members.eligible;
		EndpointState[] states = this.members.states;
		if (this.members.mayRamp()) {
			long now = this.members.nanoClock.getAsLong();
			if (this.members.rampingAt(now)) {
				return selectRamping(eligible, states, now);
			}
		}
		EndpointState[] candidates = this.members.eligibleStates;
		if (this.members.loadScale != null) {
			return selectReported(eligible, candidates);
		}
		int best = -1;
		int bestLoad = Integer.MAX_VALUE;
		for (int i = 0; i < candidates.length; i++) {
			int load = candidates[i].inFlight();
			if (load < bestLoad) {
				if (load == 0) {
					// Nothing is lower, and later endpoints lose ties: the scan is over.
					return eligible[i];
				}
				best = i;
				bestLoad = load;
			}
		}
		return (best < 0) ? -1 : eligible[best];
	}

	/**
	 * The scan when load reports weigh the endpoints: the lowest {@code (inFlight + 1) /
	 * scale}, so an idle endpoint that reports more load than another idle one loses to
	 * it, and the scan reads every endpoint.
	 */
	private int selectReported(int[] eligible, EndpointState[] candidates) {
		int best = -1;
		int bestLoad = 0;
		for (int i = 0; i < candidates.length; i++) {
			int load = candidates[i].inFlight();
			if (best < 0 || this.members.lessLoaded(eligible[i], load, eligible[best], bestLoad)) {
				best = i;
				bestLoad = load;
			}
		}
		return (best < 0) ? -1 : eligible[best];
	}

	private int selectRamping(int[] eligible, EndpointState[] states, long now) {
		int best = -1;
		double bestCost = Double.MAX_VALUE;
		for (int index : eligible) {
			double cost = (states[index].inFlight() + 1) / this.members.rampFactor(index, now)
					/ this.members.loadScale(index);
			if (cost < bestCost) {
				best = index;
				bestCost = cost;
			}
		}
		return best;
	}

}
