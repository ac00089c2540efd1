package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import org.jspecify.annotations.Nullable;

/**
 * One service's balancer: the current {@link Snapshot} behind one atomic reference.
 * <p>
 * Picks read the reference once and take no lock. {@link #update} builds a new snapshot
 * from the old one and swaps it in; endpoints whose address stays keep their
 * {@link EndpointState} (in-flight count, picks, latency, ramp start), so does the
 * round-robin position; new addresses start fresh, removed ones drop their state, and a
 * removed address that returns later is new again. Endpoints are listed in
 * {@link Endpoint#CANONICAL_ORDER}, whatever order the caller gives them in. Rebuilds are
 * serialized on a private monitor, which picks never touch.
 * <p>
 * A pick never rebuilds: when it notices that an ejection ended or a slow-start step
 * passed, it hands the rebuild to the {@code rebuilds} executor and goes on with the
 * snapshot it has. The gateway gives a thread of its own, so rings and tables are never
 * built on an event loop.
 * <p>
 * Draining: {@link #drain} takes an address out of the picks without taking it out of the
 * set, for as long as it stays in the set.
 * <p>
 * Slow start: an address that joins a set that already had endpoints ramps from the
 * moment it joined, if the settings have a slow-start window at that moment. The first
 * endpoints of a set, and endpoints present when slow start is turned on, do not ramp.
 *
 * @param <T> the caller's endpoint type, such as a discovered service instance
 */
public final class Balancer<T> {

	private final Function<? super T, Endpoint> describe;

	private final LongSupplier nanoClock;

	private final Supplier<? extends RandomGenerator> random;

	private final Executor rebuilds;

	/**
	 * The round-robin position, shared by every snapshot of this service.
	 */
	private final AtomicLong roundRobinTicket = new AtomicLong();

	/**
	 * The round-robin position and the request count of each priority level, shared by
	 * every snapshot of this service, made on the rebuild thread.
	 */
	private final Map<Integer, AtomicLong> levelTickets = new ConcurrentHashMap<>();

	private final Map<Integer, LongAdder> levelRequests = new ConcurrentHashMap<>();

	/**
	 * Which priorities spill by load and their costs, which each rebuild hands to its
	 * levels: written by the control thread.
	 */
	private volatile Map<Integer, LevelSpill.Load> load = Map.of();

	/**
	 * Each address's scale from the endpoints' load reports ({@link LoadScales}), empty
	 * while none are given. Guarded by the rebuild monitor.
	 */
	private Map<String, Integer> loadScales = Map.of();

	private final AtomicReference<Snapshot<T>> current;

	private final Object rebuildMonitor = new Object();

	private final AtomicBoolean reevaluating = new AtomicBoolean();

	/**
	 * Addresses that take no new picks. Guarded by the rebuild monitor; an address that
	 * leaves the set leaves this set too.
	 */
	private final Set<String> draining = new HashSet<>();

	/**
	 * Creates a balancer with no endpoints.
	 * @param settings the initial settings
	 * @param describe maps a caller's value to its address and weight
	 * @param nanoClock a monotonic clock in nanoseconds, such as {@code System::nanoTime}
	 * @param random the random source for randomized algorithms, such as
	 * {@code ThreadLocalRandom::current}; called once per pick, from the picking thread
	 */
	public Balancer(BalancerSettings settings, Function<? super T, Endpoint> describe, LongSupplier nanoClock,
			Supplier<? extends RandomGenerator> random) {
		this(settings, describe, nanoClock, random, Runnable::run);
	}

	/**
	 * Creates a balancer with no endpoints whose pick-triggered rebuilds run on
	 * {@code rebuilds}.
	 * @param settings the initial settings
	 * @param describe maps a caller's value to its address and weight
	 * @param nanoClock a monotonic clock in nanoseconds, such as {@code System::nanoTime}
	 * @param random the random source for randomized algorithms; called once per pick,
	 * from the picking thread
	 * @param rebuilds runs the rebuilds a pick asks for (an ended ejection, a slow-start
	 * step); {@code Runnable::run} runs them on the picking thread
	 */
	public Balancer(BalancerSettings settings, Function<? super T, Endpoint> describe, LongSupplier nanoClock,
			Supplier<? extends RandomGenerator> random, Executor rebuilds) {
		this.describe = Objects.requireNonNull(describe, "describe");
		this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
		this.random = Objects.requireNonNull(random, "random");
		this.rebuilds = Objects.requireNonNull(rebuilds, "rebuilds");
		Objects.requireNonNull(settings, "settings");
		this.current = new AtomicReference<>(build(List.of(), settings, null));
	}

	/**
	 * Returns the current snapshot: one volatile read.
	 * @return the snapshot
	 */
	public Snapshot<T> snapshot() {
		return this.current.get();
	}

	/**
	 * Rebuilds from a new endpoint list with the current settings.
	 * @param values the endpoints; later duplicates of an address are ignored
	 * @return the new snapshot
	 */
	public Snapshot<T> update(List<? extends T> values) {
		synchronized (this.rebuildMonitor) {
			Snapshot<T> previous = this.current.get();
			return swap(build(values, previous.settings(), previous));
		}
	}

	/**
	 * Rebuilds the current endpoints with new settings.
	 * @param settings the settings
	 * @return the new snapshot
	 */
	public Snapshot<T> update(BalancerSettings settings) {
		synchronized (this.rebuildMonitor) {
			Snapshot<T> previous = this.current.get();
			return swap(build(previous.values(), settings, previous));
		}
	}

	/**
	 * Rebuilds from a new endpoint list and new settings.
	 * @param values the endpoints; later duplicates of an address are ignored
	 * @param settings the settings
	 * @return the new snapshot
	 */
	public Snapshot<T> update(List<? extends T> values, BalancerSettings settings) {
		synchronized (this.rebuildMonitor) {
			return swap(build(values, settings, this.current.get()));
		}
	}

	/**
	 * Starts or stops draining an address: while it drains it keeps its state and its
	 * requests in flight, takes no new picks, and stays drained across rebuilds for as
	 * long as it stays in the set.
	 * @param address {@code host:port}
	 * @param drain whether to drain
	 * @return the new snapshot, or {@code null} if the address is not in the set
	 */
	public @Nullable Snapshot<T> drain(String address, boolean drain) {
		synchronized (this.rebuildMonitor) {
			Snapshot<T> previous = this.current.get();
			if (previous.endpoints().stream().noneMatch((endpoint) -> endpoint.address().equals(address))) {
				return null;
			}
			if (drain ? !this.draining.add(address) : !this.draining.remove(address)) {
				return previous;
			}
			return swap(build(previous.values(), previous.settings(), previous));
		}
	}

	/**
	 * Rebuilds the current endpoints so that ejections and active health results take
	 * effect: called after an ejection, and by a pick once an ejection has ended.
	 * @return the new snapshot
	 */
	public Snapshot<T> reevaluate() {
		synchronized (this.rebuildMonitor) {
			Snapshot<T> previous = this.current.get();
			return swap(build(previous.values(), previous.settings(), previous));
		}
	}

	/**
	 * Asks the rebuild executor to re-evaluate the current endpoints, unless a
	 * re-evaluation is already on its way: the many picks that notice an ended ejection,
	 * and the many failures that eject endpoints in a burst, cost one rebuild. The
	 * re-evaluation reads the state current when it runs, so it never applies an older
	 * input over a newer one.
	 */
	public void reevaluateLater() {
		if (this.reevaluating.compareAndSet(false, true)) {
			try {
				this.rebuilds.execute(() -> {
					// Cleared first: an ejection after this point asks for another pass.
					this.reevaluating.set(false);
					reevaluate();
				});
			}
			catch (RuntimeException ex) {
				this.reevaluating.set(false);
				throw ex;
			}
		}
	}

	/**
	 * Re-evaluates later if {@code seen} is still current.
	 */
	void reevaluateLater(Snapshot<T> seen) {
		if (this.current.get() == seen) {
			reevaluateLater();
		}
	}

	/**
	 * Sets which priority levels spill by load and what a request costs in each
	 * ({@link LevelSpill}). Applies to the current snapshot at once, without a rebuild,
	 * and to every later one.
	 * @param loads the load of each priority; a priority not named does not spill
	 */
	public void load(Map<Integer, LevelSpill.Load> loads) {
		Map<Integer, LevelSpill.Load> copy = Map.copyOf(loads);
		synchronized (this.rebuildMonitor) {
			this.load = copy;
			this.current.get().load(copy);
		}
	}

	/**
	 * Sets the weights the endpoints' own load reports give them, relative to their mean
	 * (1 the mean weight): round-robin multiplies each endpoint's weight by its own,
	 * least-requests and power of two choices divide its requests in flight (plus one) by
	 * it. Weights are kept in steps of 1/{@value LoadScales#MEAN} of the mean, and the
	 * snapshot is rebuilt only when a step changes, so a report that moves a weight by a
	 * hair costs nothing. Called by the control thread, never per request.
	 * @param weights each address's weight, above 0; an address not named takes the mean;
	 * empty turns the weights off
	 * @return whether the snapshot was rebuilt
	 */
	public boolean loadWeights(Map<String, Double> weights) {
		Map<String, Integer> scales = LoadScales.of(weights);
		synchronized (this.rebuildMonitor) {
			if (scales.equals(this.loadScales)) {
				return false;
			}
			this.loadScales = scales;
			Snapshot<T> previous = this.current.get();
			swap(build(previous.values(), previous.settings(), previous));
			return true;
		}
	}

	/**
	 * Returns the request counter of each priority level the service has had.
	 * @return the counters by priority, a live view
	 */
	public Map<Integer, LongAdder> levelRequests() {
		return Collections.unmodifiableMap(this.levelRequests);
	}

	private Snapshot<T> swap(Snapshot<T> next) {
		this.current.set(next);
		return next;
	}

	private Snapshot<T> build(List<? extends T> values, BalancerSettings settings, Snapshot<T> previous) {
		Objects.requireNonNull(settings, "settings");
		long now = this.nanoClock.getAsLong();
		Map<String, EndpointState> carried = new HashMap<>();
		if (previous != null) {
			for (EndpointState state : previous.states()) {
				carried.put(state.address(), state);
			}
		}
		boolean joiningServingSet = !carried.isEmpty();
		long rampStart = (joiningServingSet && settings.slowStartNanos() > 0) ? now : SlowStart.NO_RAMP;
		List<Described<T>> described = new ArrayList<>(values.size());
		Set<String> seen = new HashSet<>();
		for (T value : values) {
			Endpoint endpoint = Objects.requireNonNull(this.describe.apply(value), "endpoint");
			if (seen.add(endpoint.address())) {
				described.add(new Described<>(value, endpoint));
			}
		}
		described.sort((a, b) -> Endpoint.CANONICAL_ORDER.compare(a.endpoint(), b.endpoint()));
		List<T> kept = new ArrayList<>(described.size());
		List<Endpoint> endpoints = new ArrayList<>(described.size());
		List<EndpointState> states = new ArrayList<>(described.size());
		for (Described<T> member : described) {
			Endpoint endpoint = member.endpoint();
			kept.add(member.value());
			endpoints.add(endpoint);
			EndpointState state = carried.get(endpoint.address());
			if (state != null && state.ejectedUntilNanos() != EndpointState.NOT_EJECTED && !state.isEjected(now)) {
				// Its ejection is over: back in, ramping like a newcomer if slow start is
				// on.
				state.returned(now, settings.slowStartNanos() > 0);
			}
			states.add((state != null) ? state : new EndpointState(endpoint.address(), rampStart));
		}
		this.draining.retainAll(seen);
		boolean[] draining = new boolean[endpoints.size()];
		for (int i = 0; i < draining.length; i++) {
			draining[i] = this.draining.contains(endpoints.get(i).address());
		}
		Members members = new Members(endpoints.toArray(new Endpoint[0]), states.toArray(new EndpointState[0]),
				draining, settings, LoadScales.forEndpoints(this.loadScales, endpoints), this.nanoClock, this.random,
				this.rebuilds, now);
		Strategy strategy = Strategy.create(settings.algorithm(), members, this.roundRobinTicket);
		Levels levels = Levels.of(members, settings.algorithm(),
				(priority) -> this.levelTickets.computeIfAbsent(priority, (p) -> new AtomicLong()),
				(priority) -> this.levelRequests.computeIfAbsent(priority, (p) -> new LongAdder()), this.load, now);
		long generation = (previous != null) ? previous.generation() + 1 : 0;
		return new Snapshot<>(List.copyOf(kept), members, strategy, generation, this, levels);
	}

	private record Described<T>(T value, Endpoint endpoint) {
	}

}
