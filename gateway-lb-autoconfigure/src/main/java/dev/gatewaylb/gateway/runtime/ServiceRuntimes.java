package dev.gatewaylb.gateway.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.gatewaylb.balance.Balancer;
import dev.gatewaylb.balance.EndpointState;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import dev.gatewaylb.gateway.settings.HedgeSettings;
import dev.gatewaylb.gateway.settings.InstanceWeights;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.ServiceSettings;
import dev.gatewaylb.gateway.settings.SplitSettings;
import dev.gatewaylb.gateway.upstream.Upstream;
import dev.gatewaylb.gateway.upstream.Upstreams;
import dev.gatewaylb.health.Ejections;
import dev.gatewaylb.health.LatencyOutliers;
import dev.gatewaylb.health.OutlierDetection;
import dev.gatewaylb.retry.RetryBudget;
import dev.gatewaylb.hedge.Hedging;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.context.SmartLifecycle;

/**
 * Every service's {@link ServiceRuntime}, built and rebuilt on one thread of its own,
 * never on the request path.
 * <p>
 * A service is tracked from start-up when a route names it ({@code lb://id}), when it is
 * configured under {@code gateway.lb.services}, or when it is a split target, so the
 * actuator shows its endpoints and drain works before its first request; a service first
 * named by a request is tracked then, and that request waits for its first build without
 * blocking. The runtime thread polls every tracked service's instances each
 * {@link #POLL_INTERVAL} (and at once when discovery announces a change), rebuilds a
 * balancer only when its membership changed ({@link Membership#differsFrom}), closes the
 * pools of departed endpoints, and applies refreshed settings, carrying over the
 * balancer, the pools and the budget wherever their settings stayed. A replaced pool
 * closes once no request uses it.
 * <p>
 * Why this is safe without locks on the request path: a request reads a service's runtime
 * with one map read and one volatile read; every write happens on the runtime thread, one
 * task at a time, and each task reads the newest inputs when it runs, so an older input
 * never overwrites a newer one.
 */
public final class ServiceRuntimes implements SmartLifecycle {

	/**
	 * How often every tracked service's instances are read again.
	 */
	public static final Duration POLL_INTERVAL = Duration.ofSeconds(1);

	/**
	 * Longest wait for a service's first instance list before its first requests go on
	 * with none (and get 503).
	 */
	static final Duration FIRST_POLL_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * How often a replaced upstream is checked for requests still using it.
	 */
	static final Duration RETIRE_CHECK = Duration.ofSeconds(1);

	/**
	 * How long the pools of an endpoint that left discovery stay open: requests that
	 * picked it just before it left still get their connection, and an endpoint that
	 * comes back at once keeps its connections.
	 */
	static final Duration DEPARTED_GRACE = Duration.ofSeconds(2);

	private static final Log logger = LogFactory.getLog(ServiceRuntimes.class);

	private final LiveSettings settings;

	private final InstanceSource source;

	private final Upstreams upstreams;

	private final LongSupplier nanoClock;

	private final Supplier<? extends RandomGenerator> random;

	private final ScheduledExecutorService thread;

	/**
	 * Slots by lower-case id, and by every other spelling a lookup used.
	 */
	private final Map<String, Slot> slots = new ConcurrentHashMap<>();

	private final List<RuntimeListener> listeners = new CopyOnWriteArrayList<>();

	private final Set<String> reportedWeights = ConcurrentHashMap.newKeySet();

	private volatile @Nullable ScheduledFuture<?> polling;

	private volatile boolean stopped;

	/**
	 * Creates the registry; nothing runs until {@link #start()}.
	 * @param settings the settings in force
	 * @param source where instances come from
	 * @param upstreams builds each service's pools
	 * @param nanoClock a monotonic clock in nanoseconds
	 * @param random the random source of the randomized algorithms, called once per pick
	 * on the picking thread
	 */
	public ServiceRuntimes(LiveSettings settings, InstanceSource source, Upstreams upstreams, LongSupplier nanoClock,
			Supplier<? extends RandomGenerator> random) {
		this.settings = Objects.requireNonNull(settings, "settings");
		this.source = Objects.requireNonNull(source, "source");
		this.upstreams = Objects.requireNonNull(upstreams, "upstreams");
		this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
		this.random = Objects.requireNonNull(random, "random");
		this.thread = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "gateway-lb-runtime");
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Returns the balancer clock's current time.
	 * @return nanoseconds
	 */
	public long nanoTime() {
		return this.nanoClock.getAsLong();
	}

	/**
	 * Adds a listener told of every new runtime and every new snapshot, on the runtime
	 * thread. It is told at once of the runtimes that exist.
	 * @param listener the listener
	 */
	public void addListener(RuntimeListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
		run(() -> all().forEach((runtime) -> listener.runtimeChanged(null, runtime)));
	}

	/**
	 * Returns the runtime of a service, as fast as a map read: the request path.
	 * @param serviceId the id in any spelling
	 * @return the runtime, or {@code null} when the service is not tracked or not built
	 * yet
	 */
	public @Nullable ServiceRuntime find(String serviceId) {
		Slot slot = slot(serviceId);
		// Ready once discovery's first answer is applied: a request never meets a
		// service whose endpoints are not known yet.
		return (slot != null && slot.ready.isDone()) ? slot.runtime : null;
	}

	/**
	 * Returns the runtime of a service once it is built, tracking the service if it was
	 * not; never blocks.
	 * @param serviceId the id in any spelling
	 * @return the runtime
	 */
	public Mono<ServiceRuntime> whenReady(String serviceId) {
		Slot slot = slotOf(serviceId);
		ServiceRuntime runtime = slot.runtime;
		if (runtime != null && slot.ready.isDone()) {
			return Mono.just(runtime);
		}
		return Mono.fromFuture(slot.ready, true);
	}

	/**
	 * Starts tracking services: their runtimes are built on the runtime thread.
	 * @param serviceIds ids in any spelling
	 */
	public void track(Collection<String> serviceIds) {
		serviceIds.forEach(this::track);
	}

	/**
	 * Starts tracking a service: its runtime is built on the runtime thread.
	 * @param serviceId the id in any spelling
	 */
	public void track(String serviceId) {
		slotOf(serviceId);
	}

	private Slot slotOf(String serviceId) {
		Slot found = slot(serviceId);
		if (found != null) {
			return found;
		}
		String id = serviceId.toLowerCase(Locale.ROOT);
		boolean[] created = new boolean[1];
		Slot slot = this.slots.computeIfAbsent(id, (key) -> {
			created[0] = true;
			return new Slot(key);
		});
		if (created[0]) {
			run(() -> create(slot));
		}
		return slot;
	}

	private @Nullable Slot slot(String serviceId) {
		Slot slot = this.slots.get(serviceId);
		if (slot == null) {
			String id = serviceId.toLowerCase(Locale.ROOT);
			if (!id.equals(serviceId)) {
				slot = this.slots.get(id);
				if (slot != null) {
					// Spellings come from route definitions, not from requests: bounded.
					this.slots.putIfAbsent(serviceId, slot);
				}
			}
		}
		return slot;
	}

	/**
	 * Returns every service's runtime, sorted by id.
	 * @return the runtimes built so far
	 */
	public List<ServiceRuntime> all() {
		Map<String, ServiceRuntime> sorted = new TreeMap<>();
		for (Slot slot : distinctSlots()) {
			ServiceRuntime runtime = slot.runtime;
			if (runtime != null) {
				sorted.put(runtime.id(), runtime);
			}
		}
		return List.copyOf(sorted.values());
	}

	/**
	 * Returns the current snapshot of a service.
	 * @param serviceId the id in any spelling
	 * @return the snapshot, or {@code null} when the service has no runtime
	 */
	public @Nullable Snapshot<Member> snapshot(String serviceId) {
		ServiceRuntime runtime = find(serviceId);
		return (runtime != null) ? runtime.snapshot() : null;
	}

	/**
	 * Returns the current snapshot of every service, by id.
	 * @return the snapshots, sorted by id
	 */
	public Map<String, Snapshot<Member>> snapshots() {
		Map<String, Snapshot<Member>> snapshots = new TreeMap<>();
		all().forEach((runtime) -> snapshots.put(runtime.id(), runtime.snapshot()));
		return snapshots;
	}

	/**
	 * Starts or stops draining an endpoint: it takes no new picks, its requests in flight
	 * finish, and it stays drained while discovery keeps it. Takes effect before this
	 * returns. Blocks for the runtime thread, and right after start-up for the service's
	 * first instance list: not for event loops.
	 * @param serviceId the id in any spelling
	 * @param address the endpoint's {@code host:port}
	 * @param drain whether to drain
	 * @return whether the service has that endpoint
	 */
	public boolean drain(String serviceId, String address, boolean drain) {
		Slot slot = slot(serviceId);
		if (slot == null) {
			return false;
		}
		try {
			// Right after start-up, discovery's first answer may not be in yet: the
			// endpoint to drain is not known before it.
			slot.ready.get(FIRST_POLL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			return this.thread.submit(() -> {
				ServiceRuntime runtime = slot.runtime;
				if (runtime == null) {
					return false;
				}
				Snapshot<Member> previous = runtime.snapshot();
				Snapshot<Member> next = runtime.balancer().drain(address, drain);
				if (next != null && next != previous) {
					publish(runtime, previous, next);
				}
				return next != null;
			}).get(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while draining " + address, ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("could not drain " + address + " of " + serviceId, ex);
		}
	}

	/**
	 * Reads every tracked service's instances now, as after a discovery announcement.
	 */
	public void pollNow() {
		run(this::pollAll);
	}

	/**
	 * Waits until the runtime thread has run every task given to it so far, and the tasks
	 * those gave it in turn: for tests.
	 */
	void sync() {
		for (int i = 0; i < 3; i++) {
			try {
				this.thread.submit(() -> {
				}).get(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (ExecutionException | TimeoutException ex) {
				throw new IllegalStateException(ex);
			}
		}
	}

	@Override
	public void start() {
		this.settings.onApply((applied) -> run(() -> settingsApplied(applied)));
		long interval = POLL_INTERVAL.toMillis();
		this.polling = this.thread.scheduleWithFixedDelay(safely(this::pollAll), interval, interval,
				TimeUnit.MILLISECONDS);
	}

	/**
	 * Starts before the web server takes requests, so that the services routes name are
	 * being built when the first requests arrive, and stops after it stopped.
	 */
	@Override
	public int getPhase() {
		return WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE - 1;
	}

	@Override
	public void stop() {
		ScheduledFuture<?> polling = this.polling;
		if (polling != null) {
			polling.cancel(false);
		}
		this.polling = null;
		this.stopped = true;
		this.thread.shutdownNow();
		try {
			// A task that is creating a service's Spring Cloud LoadBalancer context must
			// not outlive the application context it asks for beans.
			this.thread.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		for (Slot slot : distinctSlots()) {
			ServiceRuntime runtime = slot.runtime;
			if (runtime != null && runtime.upstreamOrNull() != null) {
				runtime.upstream().close().subscribe();
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.polling != null;
	}

	private void run(Runnable task) {
		try {
			this.thread.execute(safely(task));
		}
		catch (RuntimeException ex) {
			// Shut down: nothing runs any more.
			logger.debug("gateway-lb runtime thread is stopped; task dropped", ex);
		}
	}

	private void schedule(Runnable task, Duration delay) {
		try {
			this.thread.schedule(safely(task), delay.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (RuntimeException ex) {
			logger.debug("gateway-lb runtime thread is stopped; task dropped", ex);
		}
	}

	/**
	 * Returns the task, made to log its failure instead of ending the thread's schedule,
	 * and to do nothing once the registry stopped.
	 */
	private Runnable safely(Runnable task) {
		return () -> {
			if (this.stopped) {
				return;
			}
			try {
				task.run();
			}
			catch (RuntimeException ex) {
				logger.error("gateway-lb runtime task failed", ex);
			}
		};
	}

	private Collection<Slot> distinctSlots() {
		Map<Slot, Boolean> distinct = new IdentityHashMap<>();
		this.slots.values().forEach((slot) -> distinct.put(slot, true));
		return distinct.keySet();
	}

	// Everything below runs on the runtime thread.

	private void settingsApplied(GatewayLbSettings applied) {
		for (Slot slot : distinctSlots()) {
			ServiceRuntime runtime = slot.runtime;
			if (runtime != null) {
				reconfigure(slot, runtime, applied.forService(slot.id));
			}
		}
		track(applied.configuredServices());
		for (SplitSettings split : applied.splits().values()) {
			split.split().targets().forEach((target) -> track(target.service()));
		}
	}

	private void create(Slot slot) {
		ServiceSettings serviceSettings = this.settings.get().forService(slot.id);
		boolean balancedHere = true;
		try {
			balancedHere = this.source.balancesHere(slot.id);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not tell whether service " + slot.id + " has a balancer of its own; balancing it", ex);
		}
		if (!balancedHere) {
			logger.info("Service " + slot.id + " has a Spring Cloud LoadBalancer balancer of the application's own; "
					+ "gateway-lb leaves its requests to Spring Cloud Gateway");
		}
		Balancer<Member> balancer = new Balancer<>(serviceSettings.balancer(), Member::endpoint, this.nanoClock,
				this.random, this.thread);
		Upstream upstream = balancedHere ? this.upstreams.build(slot.id, serviceSettings.upstream()) : null;
		ServiceRuntime runtime = new ServiceRuntime(slot.id, serviceSettings, balancer, upstream,
				budget(serviceSettings), hedging(serviceSettings), ServiceCounters.create(), new AtomicBoolean(),
				new Ejections(), 1, this.nanoClock);
		slot.runtime = runtime;
		this.listeners.forEach((listener) -> listener.runtimeChanged(null, runtime));
		if (!balancedHere) {
			slot.ready.complete(runtime);
			return;
		}
		schedule(() -> slot.ready.complete(slot.runtime), FIRST_POLL_TIMEOUT);
		poll(slot);
	}

	private void reconfigure(Slot slot, ServiceRuntime current, ServiceSettings next) {
		ServiceSettings previous = current.settings();
		if (previous.equals(next)) {
			return;
		}
		if (!previous.balancer().equals(next.balancer())) {
			Snapshot<Member> before = current.snapshot();
			publish(current, before, current.balancer().update(next.balancer()));
		}
		Upstream upstream = current.upstreamOrNull();
		if (upstream != null && !upstream.settings().sameClientAs(next.upstream())) {
			Upstream replaced = upstream;
			upstream = this.upstreams.build(slot.id, next.upstream());
			logger
				.info("Rebuilt the connection pools of " + slot.id + "; the old ones close once no request uses them");
			retire(replaced);
		}
		RetryBudget budget = previous.retry().equals(next.retry()) ? current.budget() : budget(next);
		Hedging hedging = previous.hedge().equals(next.hedge()) ? current.hedging() : hedging(next);
		ServiceRuntime runtime = current.with(next, upstream, budget, hedging);
		slot.runtime = runtime;
		this.listeners.forEach((listener) -> listener.runtimeChanged(current, runtime));
	}

	private RetryBudget budget(ServiceSettings settings) {
		return new RetryBudget(settings.retry().budgetPercent(), settings.retry().budgetMinPerSecond(), this.nanoClock);
	}

	private @Nullable Hedging hedging(ServiceSettings settings) {
		HedgeSettings hedge = settings.hedge();
		return hedge.enabled() ? new Hedging(hedge.maxExtraLoad(), hedge.minDelayNanos(), this.nanoClock) : null;
	}

	/**
	 * Closes a replaced upstream once no connection of it is in use, checking every
	 * {@link #RETIRE_CHECK}: a request that took the old runtime just before the swap has
	 * acquired its connection long before the first check.
	 */
	private void retire(Upstream upstream) {
		schedule(() -> {
			if (upstream.isIdle()) {
				upstream.close().subscribe();
			}
			else {
				retire(upstream);
			}
		}, RETIRE_CHECK);
	}

	private void pollAll() {
		for (Slot slot : distinctSlots()) {
			ServiceRuntime runtime = slot.runtime;
			if (runtime != null && runtime.isBalancedHere()) {
				poll(slot);
				ejectSlowEndpoints(slot, runtime);
				Hedging hedging = runtime.hedging();
				if (hedging != null) {
					// The latency window moves on here, off the event loops.
					hedging.roll();
				}
			}
		}
	}

	/**
	 * Latency-based ejection, once a poll interval on this thread: the median of the
	 * endpoints' averages is taken here, never on the request path, which only adds to
	 * each endpoint's latency sums. The ejection goes through the same atomic cap as a
	 * failure's on an event loop ({@link LatencyOutliers}).
	 */
	private void ejectSlowEndpoints(Slot slot, ServiceRuntime runtime) {
		OutlierDetection detection = runtime.settings().health().passive();
		long now = this.nanoClock.getAsLong();
		for (EndpointState state : slot.latency.evaluate(runtime.snapshot(), runtime.ejections(), detection, now)) {
			logger.warn("Ejected " + state.address() + " of service " + runtime.id() + " for "
					+ (state.ejectedUntilNanos() - now) / 1_000_000 + " ms: its latency average is more than "
					+ detection.latencyFactor() + " times the median of the service's endpoints, "
					+ Math.round(slot.latency.lastMedianNanos() / 1_000) / 1000.0 + " ms");
			runtime.balancer().reevaluateLater();
		}
	}

	private void poll(Slot slot) {
		if (slot.polling) {
			return;
		}
		slot.polling = true;
		Mono<List<ServiceInstance>> instances;
		try {
			instances = this.source.instances(slot.id).timeout(FIRST_POLL_TIMEOUT);
		}
		catch (RuntimeException ex) {
			slot.polling = false;
			pollFailed(slot, ex);
			return;
		}
		instances.subscribe((list) -> run(() -> {
			slot.polling = false;
			apply(slot, list);
		}), (error) -> run(() -> {
			slot.polling = false;
			pollFailed(slot, error);
		}));
	}

	private void pollFailed(Slot slot, Throwable error) {
		if (slot.lastPollError == null || !slot.lastPollError.equals(String.valueOf(error))) {
			logger.warn("Could not read the instances of service " + slot.id + "; keeping the last ones", error);
		}
		slot.lastPollError = String.valueOf(error);
		slot.ready.complete(slot.runtime);
	}

	private void apply(Slot slot, List<ServiceInstance> instances) {
		slot.lastPollError = null;
		ServiceRuntime runtime = slot.runtime;
		if (runtime == null) {
			return;
		}
		List<Member> members = new ArrayList<>(instances.size());
		for (ServiceInstance instance : instances) {
			members.add(Member.of(instance, weight(slot.id, instance)));
		}
		Membership next = Membership.of(members);
		if (next.members().isEmpty() && !slot.membership.members().isEmpty() && !emptyConfirmed(slot)) {
			return;
		}
		slot.emptySinceNanos = 0;
		if (slot.membership.differsFrom(next)) {
			List<Member> departed = slot.membership.departedIn(next);
			Snapshot<Member> before = runtime.snapshot();
			Snapshot<Member> after = runtime.balancer().update(next.members());
			slot.membership = next;
			publish(runtime, before, after);
			if (!departed.isEmpty()) {
				schedule(() -> closeDeparted(slot, departed), DEPARTED_GRACE);
			}
		}
		slot.ready.complete(runtime);
	}

	/**
	 * Closes the pools of endpoints that left a service and have not come back.
	 */
	private void closeDeparted(Slot slot, List<Member> departed) {
		ServiceRuntime runtime = slot.runtime;
		Upstream upstream = (runtime != null) ? runtime.upstreamOrNull() : null;
		if (upstream == null) {
			return;
		}
		Set<String> present = new java.util.HashSet<>();
		slot.membership.members().forEach((member) -> present.add(member.endpoint().address()));
		for (Member member : departed) {
			if (!present.contains(member.endpoint().address())) {
				upstream.endpointLeft(member.host(), member.port());
			}
		}
	}

	/**
	 * Returns whether a service that had endpoints has now been listed with none for long
	 * enough to believe it. Discovery can list a service empty for an instant that is not
	 * the truth: Spring Cloud re-binds the simple discovery client's properties in place
	 * on refresh, and a read in between sees none. Dropping every endpoint on such a read
	 * would answer 503 to every request until the next poll, so an empty list is applied
	 * only when a poll at least one interval later says so again.
	 */
	private boolean emptyConfirmed(Slot slot) {
		long now = this.nanoClock.getAsLong();
		if (slot.emptySinceNanos == 0) {
			slot.emptySinceNanos = now;
			return false;
		}
		return now - slot.emptySinceNanos >= POLL_INTERVAL.toNanos();
	}

	private int weight(String serviceId, ServiceInstance instance) {
		String weight = instance.getMetadata().get(InstanceWeights.METADATA_KEY);
		try {
			return InstanceWeights.parse(weight);
		}
		catch (IllegalArgumentException ex) {
			String address = instance.getHost() + ":" + instance.getPort();
			if (this.reportedWeights.add(serviceId + "/" + address + "/" + weight)) {
				logger.warn("Instance " + address + " of service " + serviceId + " has an invalid metadata "
						+ ex.getMessage() + "; balancing it with weight 1");
			}
			return 1;
		}
	}

	private void publish(ServiceRuntime runtime, Snapshot<Member> previous, Snapshot<Member> next) {
		this.listeners.forEach((listener) -> listener.snapshotChanged(runtime, previous, next));
	}

	/**
	 * Hears of new runtimes and snapshots, on the runtime thread.
	 */
	public interface RuntimeListener {

		/**
		 * Called when a service gets a runtime, first or new.
		 * @param previous the runtime it replaces, or {@code null} for the first
		 * @param next the runtime now in force
		 */
		default void runtimeChanged(@Nullable ServiceRuntime previous, ServiceRuntime next) {
		}

		/**
		 * Called when a service's balancer published a snapshot after a membership
		 * change, a settings change or a drain.
		 * @param runtime the service's runtime
		 * @param previous the snapshot before
		 * @param next the snapshot now in force
		 */
		default void snapshotChanged(ServiceRuntime runtime, Snapshot<Member> previous, Snapshot<Member> next) {
		}

	}

	/**
	 * One tracked service. {@link #runtime} is written on the runtime thread and read by
	 * requests; the other mutable fields are confined to the runtime thread.
	 */
	private static final class Slot {

		final String id;

		final CompletableFuture<ServiceRuntime> ready = new CompletableFuture<>();

		volatile @Nullable ServiceRuntime runtime;

		Membership membership = Membership.EMPTY;

		boolean polling;

		/**
		 * When a poll first listed the service empty after it had endpoints; 0 when not.
		 */
		long emptySinceNanos;

		@Nullable String lastPollError;

		/**
		 * The latency windows of the service's endpoints; read and written on the runtime
		 * thread only.
		 */
		final LatencyOutliers latency = new LatencyOutliers();

		Slot(String id) {
			this.id = id;
		}

	}

}
