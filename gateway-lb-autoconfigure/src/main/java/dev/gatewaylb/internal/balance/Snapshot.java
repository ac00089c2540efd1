package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * An immutable view of one service's endpoints and the algorithm bound to them. A pick is
 * {@link #select} then {@link #acquire} on the same snapshot; a concurrent rebuild
 * publishes a new snapshot and never changes this one.
 *
 * @param <T> the caller's endpoint type, returned by {@link #value(int)}
 */
public final class Snapshot<T> {

	/**
	 * The fewest requests in flight a load bound ({@link #underLoadBound}) ever moves a
	 * request away from.
	 */
	public static final int MIN_LOAD_BOUND = 8;

	/**
	 * What {@link #select} returns when endpoints could be picked but every one is at its
	 * concurrency limit: the request is shed.
	 */
	public static final int AT_LIMIT = -2;

	private final List<T> values;

	private final Members members;

	private final Strategy strategy;

	private final long generation;

	private final Balancer<T> balancer;

	/**
	 * The priority levels, or {@code null} without them.
	 */
	private final @Nullable Levels levels;

	/**
	 * The levels picks draw from: {@link #levels}, or {@code null} while the set fails
	 * open or panics (every endpoint then takes traffic, whatever its level).
	 */
	private final @Nullable Levels drawn;

	Snapshot(List<T> values, Members members, Strategy strategy, long generation, Balancer<T> balancer,
			@Nullable Levels levels) {
		this.values = values;
		this.members = members;
		this.strategy = strategy;
		this.generation = generation;
		this.balancer = balancer;
		this.levels = levels;
		this.drawn = (members.failOpen || members.panic) ? null : levels;
	}

	/**
	 * Selects an endpoint. Takes no lock and allocates nothing.
	 * <p>
	 * An endpoint at its concurrency limit is passed by: the algorithm's choice, if it is
	 * under its limit, else the next eligible endpoint in address order that is. Two
	 * volatile reads when the choice is under its limit (always, when the service limits
	 * nothing: the limit is then {@link EndpointState#UNLIMITED}).
	 * @param hashKey the consistent-hash key, or {@code null}; other algorithms ignore it
	 * @return the endpoint's index, -1 when no endpoint can be picked (none, every weight
	 * 0, or all draining), or {@link #AT_LIMIT} when every one is at its limit
	 */
	public int select(@Nullable CharSequence hashKey) {
		returnEndedEjections();
		Levels levels = this.drawn;
		if (levels == null) {
			int index = this.strategy.select(hashKey);
			return (index >= 0 && this.members.states[index].atConcurrencyLimit()) ? nextUnderLimit(this.members, index)
					: index;
		}
		int index = levels.select(hashKey, this.members);
		if (index < 0 || !this.members.states[index].atConcurrencyLimit()) {
			return index;
		}
		// Another endpoint of the level first, then any.
		int inLevel = nextUnderLimit(levels.view(levels.levelOf(index)), index);
		return (inLevel >= 0) ? inLevel : nextUnderLimit(this.members, index);
	}

	/**
	 * Selects what the algorithm would, over concurrency limits: for a request that its
	 * partition's share admits although every endpoint is at its limit.
	 * @param hashKey the consistent-hash key, or {@code null}
	 * @return the endpoint's index, or -1 when no endpoint can be picked
	 */
	public int selectOverLimit(@Nullable CharSequence hashKey) {
		returnEndedEjections();
		Levels levels = this.drawn;
		return (levels != null) ? levels.select(hashKey, this.members) : this.strategy.select(hashKey);
	}

	/**
	 * Returns the endpoint a session that names it may follow: the endpoint whose stable
	 * id ({@link StableHash} of its {@code host:port}) is {@code id}, if it is in the
	 * set, neither ejected nor unhealthy (a draining endpoint keeps its sessions; while
	 * the set fails open, an ejected one too) and under its concurrency limit. A binary
	 * search and two volatile reads: no lock, no allocation.
	 * @param id the endpoint's stable id, as a session's cookie carries it
	 * @return the endpoint's index, or -1 when the session must go elsewhere
	 */
	public int follow(long id) {
		returnEndedEjections();
		int index = this.members.indexOfId(id);
		if (index < 0 || !this.members.followable[index] || this.members.states[index].atConcurrencyLimit()) {
			return -1;
		}
		return index;
	}

	/**
	 * Returns whether endpoint {@code index} may take one more request under a bound on
	 * its load: fewer requests in flight than {@code factor} times its weighted share of
	 * the service's requests in flight, the new one included, as consistent hashing's
	 * bounded loads count it ({@code hash-balance-factor}), and never below
	 * {@value #MIN_LOAD_BOUND}: with few requests in flight the share is noise (two
	 * sessions of one endpoint among ten requests are not an overload), and moving a
	 * session costs more than a moved hash key. An endpoint under that floor always may,
	 * without a sum; otherwise every eligible endpoint's count is read once, as
	 * least-requests reads them. Counts move while they are read: a stale one lets one
	 * request over the bound or moves one too many, never more.
	 * @param index an endpoint index
	 * @param factor the bound's factor, above 1; 0 for no bound
	 * @return whether the endpoint is under its bound
	 */
	public boolean underLoadBound(int index, double factor) {
		if (factor <= 0) {
			return true;
		}
		Members members = this.members;
		int inFlight = members.states[index].inFlight();
		if (inFlight < MIN_LOAD_BOUND) {
			return true;
		}
		long total = 0;
		long totalWeight = 0;
		boolean counted = false;
		for (int eligible : members.eligible) {
			total += members.states[eligible].inFlight();
			totalWeight += members.endpoints[eligible].weight();
			counted |= eligible == index;
		}
		if (!counted) {
			// A draining endpoint a session still follows: its load is the service's too.
			total += inFlight;
			totalWeight += members.endpoints[index].weight();
		}
		int weight = members.endpoints[index].weight();
		return totalWeight > 0 && inFlight < factor * (total + 1) * weight / totalWeight;
	}

	/**
	 * Returns the stable id of endpoint {@code index}: {@link StableHash} of its
	 * {@code host:port}, the same on every replica, what a session's cookie names.
	 * @param index an endpoint index
	 * @return the id
	 */
	public long id(int index) {
		return this.members.id(index);
	}

	/**
	 * Returns the first eligible endpoint after {@code index} (in address order, going
	 * round) that is under its concurrency limit.
	 */
	private static int nextUnderLimit(Members members, int index) {
		int[] eligible = members.eligible;
		EndpointState[] states = members.eligibleStates;
		int n = eligible.length;
		int at = Arrays.binarySearch(eligible, index);
		int start = (at >= 0) ? at : -at - 1;
		for (int i = 1; i <= n; i++) {
			int e = (start + i) % n;
			if (!states[e].atConcurrencyLimit()) {
				return eligible[e];
			}
		}
		return AT_LIMIT;
	}

	/**
	 * Asks the balancer to rebuild, off this thread, once an ejection of this snapshot
	 * has ended; the returning endpoint takes picks from the next snapshot on. Reads the
	 * clock only while an endpoint is ejected.
	 */
	private void returnEndedEjections() {
		long nextReturn = this.members.nextReturnNanos;
		if (nextReturn != Members.NO_RAMP_END && this.members.nanoClock.getAsLong() - nextReturn >= 0) {
			this.balancer.reevaluateLater(this);
		}
	}

	/**
	 * Returns whether every endpoint that could take traffic is ejected or unhealthy, so
	 * that picks go to all of them (fail open) rather than to none.
	 * @return whether the snapshot fails open
	 */
	public boolean isFailOpen() {
		return this.members.failOpen;
	}

	/**
	 * Selects an endpoint of weight above 0 uniformly at random, for callers that cannot
	 * report when a request ends: the load-aware algorithms would see every endpoint idle
	 * and herd them onto one. Takes no lock and allocates nothing.
	 * @return the endpoint's index, or -1 when the set has no endpoint of weight above 0
	 */
	public int selectUniformly() {
		returnEndedEjections();
		int[] eligible = this.members.eligible;
		return (eligible.length == 0) ? -1 : eligible[this.members.random.get().nextInt(eligible.length)];
	}

	/**
	 * Selects an endpoint uniformly at random among those {@code avoid} does not reject
	 * and under their concurrency limit, for a retry or a backup that should go
	 * elsewhere.
	 * @param avoid addresses to avoid
	 * @return the endpoint's index, or -1 when every eligible endpoint is avoided or at
	 * its limit
	 */
	public int selectAvoiding(Predicate<String> avoid) {
		return selectAvoiding(avoid, null);
	}

	/**
	 * Selects an endpoint as {@link #selectAvoiding(Predicate)} does, preferring the
	 * priority level of {@code near}: uniformly among that level's endpoints, then the
	 * next levels', then the earlier ones'. Without levels, the same as
	 * {@link #selectAvoiding(Predicate)}.
	 * @param avoid addresses to avoid
	 * @param near the address of the endpoint tried last, or {@code null} to prefer the
	 * levels in priority order
	 * @return the endpoint's index, or -1 when every eligible endpoint is avoided or at
	 * its limit
	 */
	public int selectAvoiding(Predicate<String> avoid, @Nullable String near) {
		Levels levels = this.drawn;
		if (levels == null) {
			return selectAvoiding(this.members, avoid);
		}
		int count = levels.priorities.length;
		int nearIndex = (near != null) ? this.members.indexOfId(StableHash.hash(near)) : -1;
		int first = (nearIndex >= 0) ? levels.levelOf(nearIndex) : 0;
		for (int i = 0; i < count; i++) {
			int index = selectAvoiding(levels.view((first + i) % count), avoid);
			if (index >= 0) {
				return index;
			}
		}
		return -1;
	}

	private static int selectAvoiding(Members members, Predicate<String> avoid) {
		int[] eligible = members.eligible;
		int n = eligible.length;
		if (n == 0) {
			return -1;
		}
		int start = members.random.get().nextInt(n);
		for (int i = 0; i < n; i++) {
			int index = eligible[(start + i) % n];
			if (!avoid.test(members.endpoints[index].address()) && !members.states[index].atConcurrencyLimit()) {
				return index;
			}
		}
		return -1;
	}

	/**
	 * Returns whether picks draw a priority level first: levels on, and the set neither
	 * failing open nor in panic.
	 * @return whether levels are drawn
	 */
	public boolean drawsLevels() {
		return this.drawn != null;
	}

	/**
	 * Returns whether the service's healthy fraction is below its levels' panic
	 * threshold, so that picks go to every endpoint of every level, health ignored.
	 * @return whether the snapshot panics
	 */
	public boolean isPanic() {
		return this.members.panic;
	}

	/**
	 * Returns the priority levels of the set and their shares, in priority order.
	 * @return the levels, empty without levels
	 */
	public List<Level> levels() {
		Levels levels = this.levels;
		if (levels == null) {
			return List.of();
		}
		double[] shares = levels.shares();
		List<Level> report = new ArrayList<>(shares.length);
		int eligible = this.members.eligible.length;
		for (int level = 0; level < shares.length; level++) {
			// While the set fails open or panics, every endpoint that could take traffic
			// does, whatever its level.
			double share = (this.drawn != null) ? shares[level]
					: (eligible == 0) ? 0 : (double) levels.view(level).eligible.length / eligible;
			report.add(new Level(levels.priorities[level], levels.endpoints[level], levels.healthy[level], share,
					this.drawn != null && levels.spilling(level), levels.requests(level).sum()));
		}
		return List.copyOf(report);
	}

	/**
	 * Returns the request counter of each priority level the service has had, kept across
	 * snapshots.
	 * @return the counters by priority, a live view
	 */
	public Map<Integer, LongAdder> levelRequestCounters() {
		return this.balancer.levelRequests();
	}

	/**
	 * Returns the priority of the level of endpoint {@code index}.
	 * @param index an endpoint index
	 * @return the level's priority, or -1 without levels
	 */
	public int priority(int index) {
		Levels levels = this.levels;
		return (levels != null) ? levels.priorities[levels.levelOf(index)] : -1;
	}

	/**
	 * One priority level of a set.
	 *
	 * @param priority its priority, 0 the most preferred
	 * @param endpoints its endpoints of weight above 0, draining ones included
	 * @param healthy those that take traffic: neither ejected, nor failing their checks,
	 * nor draining
	 * @param share the share of the traffic drawn for it, from health, 0 to 1
	 * @param spilling whether requests drawn for it may go to the next level because it
	 * is busy ({@link LevelSpill})
	 * @param requests the requests sent to its endpoints (each attempt: a retry counts
	 * again) since the service's first level of this priority
	 */
	public record Level(int priority, int endpoints, int healthy, double share, boolean spilling, long requests) {
	}

	/**
	 * Hands this snapshot's levels which priorities spill by load, and their costs.
	 */
	void load(Map<Integer, LevelSpill.Load> loads) {
		Levels levels = this.levels;
		if (levels != null) {
			levels.load(loads);
		}
	}

	/**
	 * Returns whether the algorithm needs in-flight counts or latency samples, which only
	 * callers that report a request's end provide.
	 * @return whether the algorithm is load-aware
	 */
	public boolean isLoadAware() {
		Algorithm algorithm = this.members.settings.algorithm();
		return algorithm == Algorithm.LEAST_REQUESTS || algorithm == Algorithm.POWER_OF_TWO_CHOICES
				|| algorithm == Algorithm.PEAK_EWMA;
	}

	/**
	 * Counts a pick of endpoint {@code index} and raises its in-flight count until the
	 * returned guard is released.
	 * @param index an index from {@link #select}
	 * @return the guard
	 */
	public InFlightGuard acquire(int index) {
		InFlightGuard guard = new InFlightGuard(claim(index), this.members.settings.ewmaDecayNanos());
		guard.start(this.members.nanoClock.getAsLong());
		return guard;
	}

	/**
	 * Counts a pick of endpoint {@code index}, raises its in-flight count, and returns
	 * its state, for the constructor of an {@link InFlightGuard} (the exchange's attempt
	 * is one): the count must then be lowered by releasing that guard, and by nothing
	 * else.
	 * @param index an index from {@link #select}
	 * @return the endpoint's state, claimed
	 */
	public EndpointState claim(int index) {
		EndpointState state = this.members.states[index];
		state.acquire();
		Levels levels = this.levels;
		if (levels != null) {
			// Counted once per claim, in the level that took it, whatever drew it there.
			levels.requests(levels.levelOf(index)).increment();
		}
		return state;
	}

	/**
	 * Returns the peak-EWMA decay of the snapshot's settings, for guards made from
	 * {@link #claim}.
	 * @return nanoseconds
	 */
	public long ewmaDecayNanos() {
		return this.members.settings.ewmaDecayNanos();
	}

	/**
	 * Returns the caller's value for endpoint {@code index}.
	 * @param index an endpoint index
	 * @return the value the snapshot was built from
	 */
	public T value(int index) {
		return this.values.get(index);
	}

	/**
	 * Returns endpoint {@code index}.
	 * @param index an endpoint index
	 * @return the endpoint
	 */
	public Endpoint endpoint(int index) {
		return this.members.endpoints[index];
	}

	/**
	 * Returns the carried state of endpoint {@code index}.
	 * @param index an endpoint index
	 * @return the state
	 */
	public EndpointState state(int index) {
		return this.members.states[index];
	}

	/**
	 * Returns the effective weight of endpoint {@code index} now: its weight times its
	 * slow-start factor, 0 while it drains.
	 * @param index an endpoint index
	 * @return the effective weight
	 */
	public double effectiveWeight(int index) {
		long now = this.members.nanoClock.getAsLong();
		return this.members.weight(index) * this.members.rampFactor(index, now);
	}

	/**
	 * Returns whether endpoint {@code index} takes new picks: weight above 0, not
	 * draining, and, unless the set fails open or panics, neither ejected nor failing its
	 * checks.
	 * @param index an endpoint index
	 * @return whether it takes traffic
	 */
	public boolean takesTraffic(int index) {
		return this.members.pickable(index);
	}

	/**
	 * Returns whether endpoint {@code index} is draining: it keeps its state and its
	 * requests in flight finish, but it takes no new picks.
	 * @param index an endpoint index
	 * @return whether it drains
	 */
	public boolean isDraining(int index) {
		return this.members.draining[index];
	}

	/**
	 * Returns the number of endpoints, including those of weight 0.
	 * @return the size
	 */
	public int size() {
		return this.members.endpoints.length;
	}

	/**
	 * Returns the values the snapshot was built from, duplicates of an address removed.
	 * @return the values, unmodifiable
	 */
	public List<T> values() {
		return this.values;
	}

	/**
	 * Returns the endpoints in index order.
	 * @return the endpoints, unmodifiable
	 */
	public List<Endpoint> endpoints() {
		return Collections.unmodifiableList(Arrays.asList(this.members.endpoints));
	}

	/**
	 * Returns the settings the snapshot was built with.
	 * @return the settings
	 */
	public BalancerSettings settings() {
		return this.members.settings;
	}

	/**
	 * Returns the number of the rebuild that produced this snapshot, from 0.
	 * @return the generation
	 */
	public long generation() {
		return this.generation;
	}

	EndpointState[] states() {
		return this.members.states;
	}

}
