package dev.gatewaylb.internal.balance;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot's priority levels ({@link LevelSettings}): which endpoints each level holds,
 * the share of the traffic each takes, and one strategy per level that picks inside it.
 * <p>
 * The shares are Envoy's priority load, computed when the snapshot is built (membership,
 * health and drain changes rebuild it), never per request: a level of {@code n} endpoints
 * of which {@code h} are healthy has the health {@code min(1, h / n x factor)}; level 0
 * takes {@code min(1, health / total)} of the traffic, and each next level
 * {@code min(what is left, health / total)}, where {@code total} is the levels' health
 * summed, at most 1 (so that when the levels together are too unhealthy to take all the
 * traffic, each takes in proportion to its health). Three local endpoints of which one is
 * healthy and three healthy remote ones: 1/3 x 1.4 = 46.7% local, 53.3% remote. Drained
 * endpoints count as unhealthy, as Envoy counts them.
 * <p>
 * Load-aware spill ({@link #load}, {@link LevelSpill}) then lets a request drawn for a
 * busy level go to the next level instead, when the next level's pick is expected to
 * answer sooner; the control thread says which levels are busy and what a request costs
 * in each, behind one volatile reference that a pick reads once.
 * <p>
 * A pick draws its level with one random number, except under consistent hashing, where
 * the key draws it, so that a key keeps its level: a key whose endpoint in its level's
 * full ring (every endpoint of weight above 0, healthy, draining or not) is healthy stays
 * in the level while the level's share is at least its healthy part; only the keys of
 * unhealthy endpoints leave, as many of them as the share sends on, chosen by a second
 * hash of the key. So ejecting one endpoint moves its keys only, some to the other
 * endpoints of its level and the rest to the next level.
 */
final class Levels {

	/**
	 * Mixed into a key's hash for the level's draw, so that the draw does not follow the
	 * key's place on the ring.
	 */
	private static final long LEVEL_SALT = 0x5f3759df9e3779b9L;

	private static final double TWO_TO_53 = 0x1p53;

	/**
	 * The priority of each level, ascending.
	 */
	final int[] priorities;

	/**
	 * Each level's view of the members: its endpoints alone may be picked.
	 */
	private final Members[] views;

	private final Strategy[] strategies;

	/**
	 * Each level's ring of every endpoint of weight above 0, healthy, draining or not,
	 * under consistent hashing; {@code null} otherwise.
	 */
	private final KetamaRing @Nullable [] fullRings;

	/**
	 * The level of each endpoint, by index.
	 */
	private final int[] levelOf;

	/**
	 * Endpoints of weight above 0 in each level, draining ones included.
	 */
	final int[] endpoints;

	/**
	 * Healthy endpoints that could take traffic in each level.
	 */
	final int[] healthy;

	/**
	 * Each level's share of the traffic, from health.
	 */
	private final double[] shares;

	/**
	 * The running sums of {@link #shares}, the last 1, for the draw.
	 */
	private final double[] cumulative;

	/**
	 * Each level's share of the traffic the levels before it left, for a key's draw.
	 */
	private final double[] conditional;

	/**
	 * The next level with healthy endpoints after each level, or -1.
	 */
	private final int[] nextHealthy;

	/**
	 * The weight of each level's endpoints that are not healthy or drain, as a fraction
	 * of the weight of its endpoints: the part of its full ring whose keys must move.
	 */
	private final double[] displaced;

	private final LongAdder[] requests;

	/**
	 * Which levels spill by load and what a request costs in each: replaced whole by the
	 * control thread.
	 */
	private volatile Load load;

	private Levels(int[] priorities, Members[] views, Strategy[] strategies, KetamaRing @Nullable [] fullRings,
			int[] levelOf, int[] endpoints, int[] healthy, double[] shares, double[] displaced, LongAdder[] requests,
			Map<Integer, LevelSpill.Load> load) {
		this.priorities = priorities;
		this.views = views;
		this.strategies = strategies;
		this.fullRings = fullRings;
		this.levelOf = levelOf;
		this.endpoints = endpoints;
		this.healthy = healthy;
		this.shares = shares;
		this.displaced = displaced;
		this.requests = requests;
		int levels = shares.length;
		this.cumulative = new double[levels];
		this.conditional = new double[levels];
		double sum = 0;
		for (int level = 0; level < levels; level++) {
			double left = 1 - sum;
			this.conditional[level] = (left <= 1e-12) ? 0 : Math.min(1, shares[level] / left);
			sum += shares[level];
			this.cumulative[level] = sum;
		}
		// Rounding must not leave a draw of 0.9999999 without a level: from the last
		// level with a share on, the sum is 1.
		int last = levels - 1;
		while (last > 0 && shares[last] <= 0) {
			last--;
		}
		for (int level = Math.max(0, last); level < levels && sum > 0; level++) {
			this.cumulative[level] = 1;
		}
		this.nextHealthy = new int[levels];
		for (int level = 0; level < levels; level++) {
			this.nextHealthy[level] = -1;
			for (int next = level + 1; next < levels; next++) {
				if (healthy[next] > 0) {
					this.nextHealthy[level] = next;
					break;
				}
			}
		}
		this.load = Load.of(priorities, load);
	}

	/**
	 * Builds the levels of a set, or returns {@code null} when its settings form none.
	 * @param all the whole set
	 * @param algorithm the algorithm of each level
	 * @param tickets the round-robin position of each priority, kept across snapshots
	 * @param requests the request counter of each priority, kept across snapshots
	 * @param load which priorities spill by load, and their costs
	 * @param nowNanos the time of the build
	 * @return the levels, or {@code null}
	 */
	static @Nullable Levels of(Members all, Algorithm algorithm, IntFunction<AtomicLong> tickets,
			IntFunction<LongAdder> requests, Map<Integer, LevelSpill.Load> load, long nowNanos) {
		LevelSettings settings = all.settings.levels();
		if (!settings.enabled()) {
			return null;
		}
		int n = all.endpoints.length;
		TreeMap<Integer, Integer> positions = new TreeMap<>();
		int[] priorityOf = new int[n];
		for (int i = 0; i < n; i++) {
			priorityOf[i] = settings.priorityOf(all.endpoints[i]);
			positions.put(priorityOf[i], 0);
		}
		int[] priorities = positions.keySet().stream().mapToInt(Integer::intValue).toArray();
		for (int level = 0; level < priorities.length; level++) {
			positions.put(priorities[level], level);
		}
		int levels = priorities.length;
		int[] levelOf = new int[n];
		int[] endpoints = new int[levels];
		int[] healthy = new int[levels];
		long[] candidateWeight = new long[levels];
		long[] unhealthyWeight = new long[levels];
		for (int i = 0; i < n; i++) {
			int level = positions.get(priorityOf[i]);
			levelOf[i] = level;
			int weight = all.endpoints[i].weight();
			if (weight > 0) {
				endpoints[level]++;
			}
			if (all.candidateAndHealthy[i]) {
				healthy[level]++;
			}
			// A drained endpoint counts as an unhealthy one: its keys are the ones that
			// move, as a drain weighs in the shares.
			if (weight > 0) {
				candidateWeight[level] += weight;
				if (!all.candidateAndHealthy[i]) {
					unhealthyWeight[level] += weight;
				}
			}
		}
		Members[] views = new Members[levels];
		Strategy[] strategies = new Strategy[levels];
		KetamaRing[] fullRings = (algorithm == Algorithm.CONSISTENT_HASH) ? new KetamaRing[levels] : null;
		double[] displaced = new double[levels];
		LongAdder[] counters = new LongAdder[levels];
		for (int level = 0; level < levels; level++) {
			boolean[] in = new boolean[n];
			for (int i = 0; i < n; i++) {
				in[i] = levelOf[i] == level;
			}
			views[level] = new Members(all, in, nowNanos, false);
			AtomicLong ticket = tickets.apply(priorities[level]);
			strategies[level] = Strategy.create(algorithm, views[level], ticket);
			if (fullRings != null) {
				// Every endpoint that would take traffic healthy and not drained.
				boolean[] candidates = new boolean[n];
				for (int i = 0; i < n; i++) {
					candidates[i] = in[i] && all.endpoints[i].weight() > 0;
				}
				// Never picked from: only asked who owns a key.
				fullRings[level] = new KetamaRing(new Members(all, candidates, nowNanos, true), (key) -> -1);
			}
			displaced[level] = (candidateWeight[level] == 0) ? 0
					: (double) unhealthyWeight[level] / candidateWeight[level];
			counters[level] = requests.apply(priorities[level]);
		}
		return new Levels(priorities, views, strategies, fullRings, levelOf, endpoints, healthy,
				healthShares(endpoints, healthy, settings.overprovisioningFactor()), displaced, counters, load);
	}

	/**
	 * Returns each level's share of the traffic from its health: Envoy's priority load,
	 * with the overprovisioning factor.
	 * @param endpoints each level's endpoints that could take traffic when healthy
	 * @param healthy each level's healthy ones
	 * @param factor the overprovisioning factor, {@code > 1}
	 * @return each level's share, 0 to 1, summing to 1 (or 0 when nothing is healthy)
	 */
	static double[] healthShares(int[] endpoints, int[] healthy, double factor) {
		int levels = endpoints.length;
		double[] health = new double[levels];
		double total = 0;
		for (int level = 0; level < levels; level++) {
			health[level] = (endpoints[level] == 0) ? 0
					: Math.min(1, (double) healthy[level] / endpoints[level] * factor);
			total += health[level];
		}
		double[] shares = new double[levels];
		if (total == 0) {
			return shares;
		}
		double normalized = Math.min(1, total);
		double left = 1;
		for (int level = 0; level < levels; level++) {
			shares[level] = Math.min(left, health[level] / normalized);
			left -= shares[level];
		}
		return shares;
	}

	/**
	 * Sets which levels spill by load and what a request costs in each. Called by the
	 * control thread; a pick sees it at its next read.
	 * @param load the load of each priority; a priority not named does not spill
	 */
	void load(Map<Integer, LevelSpill.Load> load) {
		this.load = Load.of(this.priorities, load);
	}

	/**
	 * Selects an endpoint: draws a level, then runs the level's strategy. Takes no lock
	 * and allocates nothing.
	 * @param key the consistent-hash key, or {@code null}
	 * @param members the whole set, for the random source
	 * @return the endpoint's index, or -1 when no level has one to pick
	 */
	int select(@Nullable CharSequence key, Members members) {
		KetamaRing[] fullRings = this.fullRings;
		if (fullRings != null && key != null) {
			return selectByKey(StableHash.hash(key), fullRings);
		}
		double draw = members.random.get().nextDouble();
		double[] cumulative = this.cumulative;
		int levels = cumulative.length;
		int first = levels - 1;
		for (int level = 0; level < levels; level++) {
			if (draw < cumulative[level]) {
				first = level;
				break;
			}
		}
		// A level whose strategy finds nothing (a share computed from health counts on
		// it, but its weights may all be ramping from 0) passes the pick to the next.
		for (int i = 0; i < levels; i++) {
			int level = (first + i) % levels;
			int index = this.strategies[level].select(key);
			if (index >= 0) {
				Load load = this.load;
				int next = this.nextHealthy[level];
				if (load.spilling[level] && next >= 0) {
					// Busy: the next level's pick if it is expected to answer sooner.
					int other = this.strategies[next].select(key);
					if (other >= 0 && (members.states[other].inFlight() + 1)
							* load.unitNanos[next] < (members.states[index].inFlight() + 1) * load.unitNanos[level]) {
						index = other;
						level = next;
					}
				}
				return index;
			}
		}
		return -1;
	}

	/**
	 * Selects the endpoint of a key: the key's level is the first, in priority order,
	 * that keeps it (see the class comment), and its endpoint the level's ring's.
	 */
	private int selectByKey(long hash, KetamaRing[] fullRings) {
		double draw = (StableHash.fmix64(hash ^ LEVEL_SALT) >>> 11) / TWO_TO_53;
		int levels = fullRings.length;
		for (int level = 0; level < levels; level++) {
			double share = this.conditional[level];
			if (share <= 0) {
				continue;
			}
			boolean last = level == levels - 1 || share >= 1;
			boolean keep = last;
			if (!last) {
				double displaced = this.displaced[level];
				int owner = fullRings[level].ownerOf(hash);
				boolean healthyOwner = owner >= 0 && this.views[level].pickable(owner);
				// The healthy part stays while the share covers it; of the displaced
				// part, as much as the share has room for.
				double threshold = healthyOwner ? Math.min(1, share / (1 - displaced))
						: Math.max(0, (share - (1 - displaced)) / displaced);
				keep = draw < threshold;
				if (!keep) {
					// What leaves is spread afresh over what it leaves to.
					draw = (draw - threshold) / (1 - threshold);
				}
			}
			if (keep) {
				int index = ((KetamaRing) this.strategies[level]).selectHash(hash);
				if (index >= 0) {
					return index;
				}
			}
		}
		return -1;
	}

	/**
	 * Returns the level of an endpoint.
	 * @param index an endpoint's index
	 * @return the level, 0 the most preferred
	 */
	int levelOf(int index) {
		return this.levelOf[index];
	}

	/**
	 * Returns a level's members, its eligible endpoints among them.
	 */
	Members view(int level) {
		return this.views[level];
	}

	/**
	 * Returns each level's share of the traffic from health.
	 */
	double[] shares() {
		return this.shares.clone();
	}

	/**
	 * Returns whether the level of a request drawn now may spill to the next level.
	 */
	boolean spilling(int level) {
		return this.load.spilling[level];
	}

	/**
	 * Returns the request counter of each level.
	 */
	LongAdder requests(int level) {
		return this.requests[level];
	}

	/**
	 * What the picks read of the load-aware spill, by level.
	 *
	 * @param spilling whether each level spills
	 * @param unitNanos the cost of a request in flight in each level, NaN when unknown
	 */
	private record Load(boolean[] spilling, double[] unitNanos) {

		static Load of(int[] priorities, Map<Integer, LevelSpill.Load> loads) {
			boolean[] spilling = new boolean[priorities.length];
			double[] unitNanos = new double[priorities.length];
			for (int level = 0; level < priorities.length; level++) {
				LevelSpill.Load load = loads.get(priorities[level]);
				unitNanos[level] = (load != null) ? load.unitNanos() : Double.NaN;
				spilling[level] = load != null && load.spilling();
			}
			// A level spills only to a next level with a cost to compare: NaN compares
			// false, so a spill with an unknown cost keeps every request.
			return new Load(spilling, unitNanos);
		}

	}

}
