package dev.gatewaylb.internal.balance;

import java.util.random.RandomGenerator;

import org.jspecify.annotations.Nullable;

/**
 * Draws two distinct endpoints uniformly at random and selects the one with the lower
 * cost; a tie goes to the first drawn, so equal loads spread uniformly (a tie to the
 * lower index would starve the last endpoint whenever the service is idle). With two
 * endpoints whose loads differ it therefore always selects the less loaded one; with many
 * it approaches least-requests at the cost of two reads instead of a scan, and spreads
 * concurrent picks instead of herding them onto one idle endpoint.
 * <p>
 * The cost is the in-flight count, or, for peak EWMA, the endpoint's decayed peak EWMA
 * latency times {@code inFlight + 1} (Finagle's "expected time to serve one more
 * request"). An endpoint with requests in flight but no latency sample yet costs a large
 * penalty, so a newcomer that is slow to answer its first request is not flooded. A
 * ramping endpoint's cost is divided by its slow-start factor. With weights from the
 * endpoints' load reports ({@link Balancer#loadWeights}), the in-flight cost is
 * {@code (inFlight + 1) / weight}: at equal counts the endpoint that reports less load
 * wins, and one that reported much still wins against a peer with many more requests, so
 * it keeps answering and its next report is heard.
 *
 * @see <a href="https://www.eecs.harvard.edu/~michaelm/postscripts/mythesis.pdf">The
 * Power of Two Choices in Randomized Load Balancing</a>
 */
final class PowerOfTwoChoices implements Strategy {

	private final Members members;

	private final boolean peakEwma;

	PowerOfTwoChoices(Members members, boolean peakEwma) {
		this.members = members;
		this.peakEwma = peakEwma;
	}

	@Override
	public int select(@Nullable CharSequence key) {
		int[] eligible = this.members.eligible;
		int n = eligible.length;
		if (n <= 1) {
			return (n == 0) ? -1 : eligible[0];
		}
		RandomGenerator random = this.members.random.get();
		int first = random.nextInt(n);
		int second = random.nextInt(n - 1);
		if (second >= first) {
			second++;
		}
		int a = eligible[first];
		int b = eligible[second];
		if (!this.members.mayRamp()) {
			return (this.peakEwma ? cheaperPeakEwma(b, a) : this.members.lessLoaded(b, inFlight(b), a, inFlight(a))) ? b
					: a;
		}
		long now = this.members.nanoClock.getAsLong();
		return (cost(b, now) < cost(a, now)) ? b : a;
	}

	private int inFlight(int index) {
		return this.members.states[index].inFlight();
	}

	/**
	 * Peak EWMA without slow start: compared, mostly without the clock, by
	 * {@link PeakEwma#cheaper}. Each endpoint's average and stamp are read in one
	 * volatile read, so neither is torn by a concurrent sample; the two endpoints are
	 * read one after the other, as the in-flight counts are.
	 */
	private boolean cheaperPeakEwma(int b, int a) {
		EndpointState stateB = this.members.states[b];
		EndpointState stateA = this.members.states[a];
		return PeakEwma.cheaper(stateB.latency.packed(), stateB.inFlight(), stateA.latency.packed(), stateA.inFlight(),
				this.members.settings.ewmaDecayNanos(), this.members.nanoClock);
	}

	private double cost(int index, long now) {
		EndpointState state = this.members.states[index];
		int inFlight = state.inFlight();
		// In-flight as lessLoaded weighs it: (inFlight + 1) / the load reports' scale.
		double cost = this.peakEwma
				? PeakEwma.cost(state.latency.packed(), inFlight, now, this.members.settings.ewmaDecayNanos())
				: (inFlight + 1.0) / this.members.loadScale(index);
		if (this.members.mayRamp() && this.members.rampingAt(now)) {
			cost /= this.members.rampFactor(index, now);
		}
		return cost;
	}

}
