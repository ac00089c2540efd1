package dev.gatewaylb.internal.balance;

import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import org.jspecify.annotations.Nullable;

/**
 * The immutable part of a snapshot that every strategy reads: endpoints, their carried
 * state, which ones may be picked, and the ramp.
 */
final class Members {

	static final long NO_RAMP_END = Long.MIN_VALUE;

	final Endpoint[] endpoints;

	final EndpointState[] states;

	/**
	 * Indexes of the endpoints that may be picked (weight above 0, not draining),
	 * ascending.
	 */
	final int[] eligible;

	/**
	 * The states of the {@link #eligible} endpoints, in the same order, so that a scan
	 * reads each endpoint's counter through one array instead of two.
	 */
	final EndpointState[] eligibleStates;

	/**
	 * Whether each endpoint is draining: in the set, but taking no new picks.
	 */
	final boolean[] draining;

	/**
	 * Whether each endpoint may be picked: weight above 0, not draining, and, unless the
	 * set fails open or panics, neither ejected nor unhealthy.
	 */
	private final boolean[] pickable;

	/**
	 * Whether a session that names each endpoint may follow it there: neither ejected nor
	 * unhealthy (draining and weight 0 included, so that a draining endpoint keeps its
	 * sessions), or picked by everyone while the set fails open.
	 */
	final boolean[] followable;

	/**
	 * The stable id of each endpoint ({@link StableHash} of its address), and the same
	 * ids sorted with the index each belongs to, for a session to find its endpoint.
	 */
	private final long[] ids;

	private final long[] sortedIds;

	private final int[] sortedIdIndexes;

	/**
	 * Whether every endpoint that could take traffic is ejected or unhealthy, so that
	 * picks go to all of them rather than to none.
	 */
	final boolean failOpen;

	/**
	 * Whether the service's healthy fraction fell below the levels' panic threshold, so
	 * that health is ignored and picks go to every endpoint that could take traffic,
	 * whatever its level.
	 */
	final boolean panic;

	/**
	 * Whether each endpoint could take traffic (weight above 0, not draining) and is
	 * healthy (neither ejected nor failing active checks).
	 */
	final boolean[] candidateAndHealthy;

	/**
	 * Whether each endpoint could take traffic when healthy: weight above 0, not
	 * draining.
	 */
	final boolean[] candidate;

	/**
	 * When the first ejection in this snapshot ends, or {@link #NO_RAMP_END}.
	 */
	final long nextReturnNanos;

	final BalancerSettings settings;

	/**
	 * Each endpoint's weight from the endpoints' own load reports, in
	 * {@link LoadScales#MEAN}s ({@link LoadScales#MEAN} the mean), or {@code null} while
	 * none are given: round-robin multiplies the weight by it, least-requests and power
	 * of two choices divide the load by it.
	 */
	final int @Nullable [] loadScale;

	final LongSupplier nanoClock;

	final Supplier<? extends RandomGenerator> random;

	/**
	 * Runs the rebuilds a pick asks for, off the picking thread.
	 */
	final Executor rebuilds;

	/**
	 * When the last ramp of this snapshot ends, or {@link #NO_RAMP_END}.
	 */
	final long rampEndsAtNanos;

	/**
	 * Set once a clock read has seen every ramp over, so later picks skip the clock. A
	 * stale {@code false} only costs one more clock read.
	 */
	private volatile boolean rampOver;

	Members(Endpoint[] endpoints, EndpointState[] states, boolean[] draining, BalancerSettings settings,
			int @Nullable [] loadScale, LongSupplier nanoClock, Supplier<? extends RandomGenerator> random,
			Executor rebuilds, long nowNanos) {
		this.endpoints = endpoints;
		this.loadScale = loadScale;
		this.rebuilds = rebuilds;
		this.states = states;
		this.draining = draining;
		this.settings = settings;
		this.nanoClock = nanoClock;
		this.random = random;
		// Candidates take traffic unless drained or weighed 0; healthy candidates are
		// those passive and active health leave in.
		boolean[] candidate = new boolean[endpoints.length];
		boolean[] healthy = new boolean[endpoints.length];
		int candidates = 0;
		int healthyCount = 0;
		int weighted = 0;
		long nextReturn = NO_RAMP_END;
		// Every endpoint's health, draining ones included: their sessions follow them
		// while they are healthy, and an ejection's end makes them followable again.
		for (int i = 0; i < endpoints.length; i++) {
			EndpointState state = states[i];
			boolean ejected = state.isEjected(nowNanos);
			if (ejected && (nextReturn == NO_RAMP_END || state.ejectedUntilNanos() - nextReturn < 0)) {
				nextReturn = state.ejectedUntilNanos();
			}
			healthy[i] = !ejected && state.isHealthy();
			candidate[i] = !draining[i] && endpoints[i].weight() > 0;
			if (endpoints[i].weight() > 0) {
				weighted++;
			}
			if (candidate[i]) {
				candidates++;
				if (healthy[i]) {
					healthyCount++;
				}
			}
		}
		this.failOpen = healthyCount == 0 && candidates > 0;
		// Panic counts drained endpoints as not healthy, as the levels do: draining a
		// zone is as good as losing it.
		LevelSettings levels = settings.levels();
		this.panic = !this.failOpen && levels.enabled() && candidates > 0
				&& healthyCount < levels.panicThreshold() * weighted;
		boolean spread = this.failOpen || this.panic;
		boolean[] candidateAndHealthy = new boolean[endpoints.length];
		boolean[] followable = new boolean[endpoints.length];
		for (int i = 0; i < endpoints.length; i++) {
			candidateAndHealthy[i] = candidate[i] && healthy[i];
			followable[i] = healthy[i] || (spread && candidate[i]);
		}
		this.candidate = candidate;
		this.candidateAndHealthy = candidateAndHealthy;
		this.followable = followable;
		this.pickable = spread ? candidate : candidateAndHealthy;
		this.nextReturnNanos = nextReturn;
		this.eligible = eligible(this.pickable);
		this.eligibleStates = statesOf(this.eligible, states);
		this.rampEndsAtNanos = rampEnd(this.eligible, states, settings, nowNanos);
		this.rampOver = (this.rampEndsAtNanos == NO_RAMP_END);
		this.ids = new long[endpoints.length];
		long[][] byId = new long[endpoints.length][];
		for (int i = 0; i < endpoints.length; i++) {
			this.ids[i] = StableHash.hash(endpoints[i].address());
			byId[i] = new long[] { this.ids[i], i };
		}
		Arrays.sort(byId, (a, b) -> Long.compare(a[0], b[0]));
		this.sortedIds = new long[endpoints.length];
		this.sortedIdIndexes = new int[endpoints.length];
		for (int i = 0; i < byId.length; i++) {
			this.sortedIds[i] = byId[i][0];
			this.sortedIdIndexes[i] = (int) byId[i][1];
		}
	}

	/**
	 * Makes the view of one priority level: the same endpoints, states and indexes, but
	 * only those {@code picked} accepts may be picked. Every strategy reads the endpoints
	 * it may pick through {@link #eligible} and {@link #weight}, so a strategy made over
	 * the view balances the level alone, and its picks are indexes of the whole set.
	 * @param all the whole set
	 * @param picked which endpoints of the set the level picks
	 * @param nowNanos the time of the build, for the level's ramp
	 * @param ignoreHealth whether {@code picked} alone says what may be picked, health
	 * aside: for a ring that is only asked who owns a key
	 */
	Members(Members all, boolean[] picked, long nowNanos, boolean ignoreHealth) {
		this.endpoints = all.endpoints;
		this.states = all.states;
		this.draining = all.draining;
		this.settings = all.settings;
		this.loadScale = all.loadScale;
		this.nanoClock = all.nanoClock;
		this.random = all.random;
		this.rebuilds = all.rebuilds;
		this.failOpen = all.failOpen;
		this.panic = all.panic;
		this.candidate = all.candidate;
		this.candidateAndHealthy = all.candidateAndHealthy;
		this.followable = all.followable;
		this.nextReturnNanos = all.nextReturnNanos;
		this.ids = all.ids;
		this.sortedIds = all.sortedIds;
		this.sortedIdIndexes = all.sortedIdIndexes;
		boolean[] pickable = new boolean[picked.length];
		for (int i = 0; i < picked.length; i++) {
			pickable[i] = picked[i] && (ignoreHealth || all.pickable[i]);
		}
		this.pickable = pickable;
		this.eligible = eligible(pickable);
		this.eligibleStates = statesOf(this.eligible, this.states);
		this.rampEndsAtNanos = rampEnd(this.eligible, this.states, this.settings, nowNanos);
		this.rampOver = (this.rampEndsAtNanos == NO_RAMP_END);
	}

	private static int[] eligible(boolean[] pickable) {
		int count = 0;
		for (boolean may : pickable) {
			count += may ? 1 : 0;
		}
		int[] eligible = new int[count];
		for (int i = 0, e = 0; i < pickable.length; i++) {
			if (pickable[i]) {
				eligible[e++] = i;
			}
		}
		return eligible;
	}

	private static EndpointState[] statesOf(int[] eligible, EndpointState[] states) {
		EndpointState[] of = new EndpointState[eligible.length];
		for (int e = 0; e < eligible.length; e++) {
			of[e] = states[eligible[e]];
		}
		return of;
	}

	private static long rampEnd(int[] eligible, EndpointState[] states, BalancerSettings settings, long nowNanos) {
		long rampEnd = NO_RAMP_END;
		for (int index : eligible) {
			long start = states[index].rampStartNanos;
			if (start != SlowStart.NO_RAMP && settings.slowStartNanos() > 0) {
				long end = start + settings.slowStartNanos();
				if (end - nowNanos > 0 && (rampEnd == NO_RAMP_END || end - rampEnd > 0)) {
					rampEnd = end;
				}
			}
		}
		return rampEnd;
	}

	/**
	 * Returns whether endpoint {@code index} may be picked: weight above 0, not draining,
	 * and, unless the set fails open or panics, neither ejected nor unhealthy.
	 */
	boolean pickable(int index) {
		return this.pickable[index];
	}

	/**
	 * Returns the stable id of endpoint {@code index}.
	 */
	long id(int index) {
		return this.ids[index];
	}

	/**
	 * Returns the index of the endpoint whose stable id is {@code id}, or -1 when none
	 * is. A binary search: no allocation, no lock.
	 */
	int indexOfId(long id) {
		int at = Arrays.binarySearch(this.sortedIds, id);
		return (at >= 0) ? this.sortedIdIndexes[at] : -1;
	}

	/**
	 * Returns the weight endpoint {@code index} is balanced with: its configured weight,
	 * or 0 while it cannot be picked (draining, ejected, unhealthy).
	 */
	int weight(int index) {
		return this.pickable[index] ? this.endpoints[index].weight() : 0;
	}

	/**
	 * Returns the load-report scale of endpoint {@code index}: {@link LoadScales#MEAN}
	 * when no reports are given.
	 */
	int loadScale(int index) {
		int[] scale = this.loadScale;
		return (scale != null) ? scale[index] : LoadScales.MEAN;
	}

	/**
	 * Returns whether endpoint {@code b} is less loaded than endpoint {@code a}, their
	 * requests in flight weighed by their load-report scales: {@code (inFlight + 1) /
	 * scale}, compared multiplied out, so that at equal counts the endpoint that reports
	 * less load wins and at equal reports the one with fewer requests.
	 */
	boolean lessLoaded(int b, int inFlightB, int a, int inFlightA) {
		int[] scale = this.loadScale;
		if (scale == null) {
			return inFlightB < inFlightA;
		}
		return (inFlightB + 1L) * scale[a] < (inFlightA + 1L) * scale[b];
	}

	/**
	 * Returns whether any endpoint may still be ramping, without reading the clock.
	 */
	boolean mayRamp() {
		return !this.rampOver;
	}

	/**
	 * Returns whether an endpoint is ramping at {@code nowNanos}.
	 */
	boolean rampingAt(long nowNanos) {
		if (this.rampOver) {
			return false;
		}
		if (nowNanos - this.rampEndsAtNanos >= 0) {
			this.rampOver = true;
			return false;
		}
		return true;
	}

	/**
	 * Returns the slow-start factor of endpoint {@code index} at {@code nowNanos}.
	 */
	double rampFactor(int index, long nowNanos) {
		long start = this.states[index].rampStartNanos;
		return (start == SlowStart.NO_RAMP) ? 1.0 : SlowStart.factor(nowNanos - start, this.settings.slowStartNanos());
	}

}
