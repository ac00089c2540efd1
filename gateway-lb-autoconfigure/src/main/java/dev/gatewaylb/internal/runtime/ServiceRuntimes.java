package dev.gatewaylb.internal.runtime;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlEvents;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.discovery.DiscoveryPoller;
import dev.gatewaylb.internal.discovery.DiscoveryRejection;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.discovery.Membership;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.internal.upstream.Upstream;
import dev.gatewaylb.internal.upstream.Upstreams;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Every service's {@link ServiceRuntime}, by id: the registry the request path reads, and
 * the place where runtimes are put in force, on the control thread, never on the request
 * path.
 * <p>
 * A service is tracked from start-up when a route names it ({@code lb://id}), when it is
 * configured under {@code gateway.lb.services}, or when it is a split target, so the
 * actuator shows its endpoints and drain works before its first request; a service first
 * named by a request is tracked then, and that request waits for its first build without
 * blocking, but only when discovery lists it ({@link KnownServices}): any other id a
 * request names is answered 503 and never tracked, and a service that is no longer named
 * anywhere nor listed is removed ({@code known-services} job). Each tracked service gets
 * its first runtime from the {@link RuntimeFactory}, its endpoints from the
 * {@link DiscoveryPoller} (the balancer is rebuilt only when the membership changed, and
 * the pools of departed endpoints close after a grace), and a next runtime when refreshed
 * settings change it (a replaced pool closes once no request uses it:
 * {@link UpstreamRetirement}). The ejection jobs and every feature's run over every
 * runtime ({@link EveryService}). Safe without locks on the request path: a request reads
 * a service's runtime with one map read and one volatile read; every write happens on the
 * control thread, one task at a time, and each task reads the newest inputs when it runs.
 */
public final class ServiceRuntimes {

	private static final Log logger = LogFactory.getLog(ServiceRuntimes.class);

	private final LiveSettings settings;

	private final InstanceSource source;

	private final ControlThread control;

	private final RuntimeFactory factory;

	private final DiscoveryPoller discovery;

	private final UpstreamRetirement retirement;

	private final LatencyEjection latencyEjection;

	private final SuccessRateEjection successRateEjection;

	private final List<ServiceFeature<?, ?>> features;

	private final KnownServices known = new KnownServices();

	/**
	 * Requests that named a service nobody knows, answered 503 without a runtime.
	 */
	private final LongAdder unknownNamed = new LongAdder();

	/**
	 * Whether a listing of discovery's services is under way. Control thread.
	 */
	private boolean listing;

	private @Nullable String lastListingError;

	/**
	 * The tracked services, by every spelling a lookup used.
	 */
	private final ServiceSlots slots = new ServiceSlots();

	private final List<RuntimeListener> listeners = new CopyOnWriteArrayList<>();

	private final ControlEvents events;

	private volatile boolean started;

	private volatile boolean stopped;

	/**
	 * Creates the registry; no job runs until {@link #start()}.
	 * @param settings the settings in force
	 * @param source where instances come from
	 * @param upstreams builds each service's pools
	 * @param control the control thread, whose clock is every balancer's
	 * @param random the random source of the randomized algorithms, called once per pick
	 * on the picking thread
	 * @param features the features, whose state every runtime holds and whose jobs run
	 * for every service
	 */
	public ServiceRuntimes(LiveSettings settings, InstanceSource source, Upstreams upstreams, ControlThread control,
			Supplier<? extends RandomGenerator> random, List<ServiceFeature<?, ?>> features) {
		this(settings, source, upstreams, control, random, features, ControlEvents.NONE);
	}

	/**
	 * Creates the runtimes of a gateway whose control side's events are heard.
	 * @param settings as above
	 * @param source as above
	 * @param upstreams as above
	 * @param control as above
	 * @param random as above
	 * @param features as above
	 * @param events hears ejections and drains
	 */
	public ServiceRuntimes(LiveSettings settings, InstanceSource source, Upstreams upstreams, ControlThread control,
			Supplier<? extends RandomGenerator> random, List<ServiceFeature<?, ?>> features, ControlEvents events) {
		this.settings = Objects.requireNonNull(settings, "settings");
		this.events = Objects.requireNonNull(events, "events");
		this.source = Objects.requireNonNull(source, "source");
		this.control = Objects.requireNonNull(control, "control");
		this.features = List.copyOf(features);
		this.factory = new RuntimeFactory(upstreams, control.requestClock(), random, control, this.features, events);
		this.discovery = new DiscoveryPoller(source, control);
		this.retirement = new UpstreamRetirement(control);
		this.latencyEjection = new LatencyEjection(this::all, control);
		this.successRateEjection = new SuccessRateEjection(this::all, control);
		this.known.configured(settings.get());
	}

	/**
	 * Returns the balancer clock's current time, in nanoseconds: the control thread's.
	 */
	public long nanoTime() {
		return this.control.nanoTime();
	}

	/**
	 * Adds a listener told of every new runtime and every new snapshot, on the control
	 * thread. It is told at once of the runtimes that exist.
	 * @param listener the listener
	 */
	public void addListener(RuntimeListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
		this.control.execute(() -> all().forEach((runtime) -> listener.runtimeChanged(null, runtime)));
	}

	/**
	 * Returns the runtime of a service, as fast as a map read: the request path.
	 * @param serviceId the id in any spelling
	 * @return the runtime, or {@code null} when the service is not tracked or not built
	 * yet
	 */
	public @Nullable ServiceRuntime find(String serviceId) {
		ServiceSlots.Slot slot = this.slots.find(serviceId);
		// Ready once discovery's first answer is applied: a request never meets a
		// service whose endpoints are not known yet.
		return (slot != null && slot.ready.isDone()) ? slot.runtime : null;
	}

	/**
	 * Returns the runtime of a service once it is built, tracking the service if it was
	 * not and is known; never blocks. Right after start-up, an id only discovery can know
	 * waits for discovery's first listing.
	 * @param serviceId the id in any spelling
	 * @return the runtime, or empty when no route, configuration, split or discovery
	 * names the service (counted, nothing tracked)
	 */
	public Mono<ServiceRuntime> whenReady(String serviceId) {
		ServiceSlots.Slot slot = this.slots.find(serviceId);
		if (slot == null && !this.known.contains(serviceId)) {
			if (this.known.listed.isDone()) {
				this.unknownNamed.increment();
				return Mono.empty();
			}
			return Mono.fromFuture(this.known.listed, true).then(Mono.defer(() -> whenReady(serviceId)));
		}
		if (slot == null) {
			slot = slotOf(serviceId);
		}
		ServiceRuntime runtime = slot.runtime;
		if (runtime != null && slot.ready.isDone()) {
			return Mono.just(runtime);
		}
		return Mono.fromFuture(slot.ready, true);
	}

	/**
	 * Returns how many requests named a service that no route, configuration, split or
	 * discovery knows; each was answered 503.
	 * @return the count since start-up
	 */
	public long unknownNamed() {
		return this.unknownNamed.sum();
	}

	/**
	 * Puts the services the gateway's routes name in place of those named before, and
	 * tracks them. A service no longer named anywhere is removed later.
	 * @param serviceIds every service the routes name, split names resolved to their
	 * targets
	 */
	public void routed(Collection<String> serviceIds) {
		this.known.routed(serviceIds);
		track(serviceIds);
	}

	/**
	 * Starts tracking services: their runtimes are built on the control thread.
	 * @param serviceIds ids in any spelling
	 */
	public void track(Collection<String> serviceIds) {
		serviceIds.forEach(this::track);
	}

	/**
	 * Starts tracking a service: its runtime is built on the control thread.
	 * @param serviceId the id in any spelling
	 */
	public void track(String serviceId) {
		slotOf(serviceId);
	}

	private ServiceSlots.Slot slotOf(String serviceId) {
		return this.slots.slotOf(serviceId, (created) -> this.control.execute(() -> create(created)));
	}

	/**
	 * Returns how many keys the registry's map holds, spellings included: for tests.
	 */
	int keys() {
		return this.slots.keys();
	}

	/**
	 * Returns every service's runtime, sorted by id.
	 * @return the runtimes built so far
	 */
	public List<ServiceRuntime> all() {
		Map<String, ServiceRuntime> sorted = new TreeMap<>();
		for (ServiceSlots.Slot slot : this.slots.distinct()) {
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
	 * Returns the endpoints that drain, by service id: what a replica that starts takes
	 * from its peers.
	 * @return the drained endpoints' {@code host:port}, by service id, sorted
	 */
	public Map<String, List<String>> drained() {
		return Drains.drained(snapshots());
	}

	/**
	 * Starts or stops draining an endpoint: it takes no new picks, its requests in flight
	 * finish, and it stays drained while discovery keeps it ({@link Drains#drain}).
	 * @param serviceId the id in any spelling
	 * @param address the endpoint's {@code host:port}
	 * @param drain whether to drain
	 * @param force whether to drain beyond {@code health.max-drain-percent}
	 * @return what was done
	 */
	public Drain drain(String serviceId, String address, boolean drain, boolean force) {
		ServiceSlots.Slot slot = this.slots.find(serviceId);
		Drain done = (slot != null) ? Drains.drain(slot, this.control, this::publish, address, drain, force)
				: Drain.NOT_AN_ENDPOINT;
		if (done == Drain.DONE) {
			this.events.drained(slot.id, address, drain);
		}
		return done;
	}

	/**
	 * Reads every tracked service's instances now, as after a discovery announcement.
	 */
	public void pollNow() {
		this.discovery.pollNow();
	}

	/**
	 * Starts following the settings and the jobs: {@code discovery-poll},
	 * {@code known-services}, {@code latency-ejection}, {@code success-rate-ejection},
	 * and every feature's; idempotent.
	 */
	public synchronized void start() {
		if (this.started) {
			return;
		}
		this.started = true;
		this.settings.onApply((applied) -> this.control.execute(() -> settingsApplied(applied)));
		this.discovery.start();
		this.control.execute(this::listServices);
		this.control.every("known-services", DiscoveryPoller.POLL_INTERVAL, this::listServices);
		this.latencyEjection.start();
		this.successRateEjection.start();
		this.features.forEach(this::startJobs);
	}

	private <C, S> void startJobs(ServiceFeature<C, S> feature) {
		for (Feature.Job<S> job : feature.feature().jobs()) {
			EveryService.start(this.control, job, feature.stateType(), this::all);
		}
	}

	/**
	 * Closes every service's pools and builds nothing more. Call it once the control
	 * thread has stopped, so that no task of it runs while the pools close.
	 */
	public void stop() {
		this.stopped = true;
		for (ServiceSlots.Slot slot : this.slots.distinct()) {
			ServiceRuntime runtime = slot.runtime;
			Upstream upstream = (runtime != null) ? runtime.upstreamOrNull() : null;
			if (upstream != null) {
				upstream.close().subscribe();
			}
		}
	}

	// Everything below runs on the control thread.

	private void settingsApplied(GatewayLbSettings applied) {
		if (this.stopped) {
			return;
		}
		for (ServiceSlots.Slot slot : this.slots.distinct()) {
			ServiceRuntime current = slot.runtime;
			if (current == null) {
				continue;
			}
			RuntimeFactory.Next next = this.factory.next(current, applied.forService(slot.id));
			if (!next.changed()) {
				continue;
			}
			Snapshot<Member> rebuiltFrom = next.rebuiltFrom();
			if (rebuiltFrom != null) {
				publish(current, rebuiltFrom, current.snapshot());
			}
			Upstream replaced = next.replaced();
			if (replaced != null) {
				logger.info("Rebuilt the connection pools of " + slot.id
						+ "; the old ones close once no request uses them");
				this.retirement.retire(replaced);
			}
			slot.runtime = next.runtime();
			this.listeners.forEach((listener) -> listener.runtimeChanged(current, next.runtime()));
		}
		this.known.configured(applied);
		track(applied.configuredServices());
		track(applied.namedServices());
		for (SplitSettings split : applied.splits().values()) {
			split.split().targets().forEach((target) -> track(target.service()));
		}
	}

	private void create(ServiceSlots.Slot slot) {
		if (this.stopped) {
			return;
		}
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
		ServiceRuntime runtime = this.factory.first(slot.id, this.settings.get().forService(slot.id), balancedHere);
		slot.runtime = runtime;
		this.listeners.forEach((listener) -> listener.runtimeChanged(null, runtime));
		if (!balancedHere) {
			slot.ready.complete(runtime);
			return;
		}
		slot.watch = this.discovery.watch(slot.id, new DiscoveryPoller.Listener() {

			@Override
			public void membersChanged(Membership previous, Membership next) {
				ServiceRuntime current = slot.runtime;
				Snapshot<Member> before = current.snapshot();
				publish(current, before, current.balancer().update(next.members()));
				// Discovery says these are going away (a terminating pod that still
				// serves): drained, whatever max-drain-percent says, as they leave
				// anyway.
				// Never undrained here: an operator's drain is not discovery's to undo.
				for (Member member : next.members()) {
					if (member.draining()) {
						Snapshot<Member> undrained = current.snapshot();
						Snapshot<Member> drained = current.balancer().drain(member.endpoint().address(), true);
						if (drained != null && drained != undrained) {
							publish(current, undrained, drained);
						}
					}
				}
				List<Member> departed = previous.departedIn(next);
				if (!departed.isEmpty()) {
					ServiceRuntimes.this.retirement.departed(departed, () -> slot.runtime.upstreamOrNull(),
							() -> slot.watch.membership());
				}
			}

			@Override
			public void ready() {
				slot.ready.complete(slot.runtime);
			}

			@Override
			public void rejected(DiscoveryRejection rejection) {
				slot.runtime.counters().discoveryRejected().get(rejection).increment();
			}

		});
	}

	private void listServices() {
		if (this.listing || this.stopped) {
			return;
		}
		this.listing = true;
		Mono<Set<String>> services;
		try {
			services = this.source.services().timeout(DiscoveryPoller.FIRST_POLL_TIMEOUT).defaultIfEmpty(Set.of());
		}
		catch (RuntimeException | Error ex) {
			this.listing = false;
			listingFailed(ex);
			return;
		}
		services.subscribe((ids) -> this.control.execute(() -> {
			this.listing = false;
			this.lastListingError = null;
			this.known.discovered(ids);
			forgetUnknown();
		}), (error) -> this.control.execute(() -> {
			this.listing = false;
			listingFailed(error);
		}));
	}

	private void listingFailed(Throwable error) {
		String described = String.valueOf(error);
		if (!described.equals(this.lastListingError)) {
			logger.warn("Could not list discovery's services; keeping the last list", error);
		}
		this.lastListingError = described;
		// A request waiting for the first listing goes on with the services named
		// elsewhere.
		this.known.listed.complete(null);
	}

	/**
	 * Removes the runtimes of services that have been unknown for
	 * {@link KnownServices#FORGET_AFTER}: their pools close once no request uses them,
	 * their meters go.
	 */
	private void forgetUnknown() {
		long now = this.control.nanoTime();
		for (ServiceSlots.Slot slot : this.slots.distinct()) {
			if (this.known.contains(slot.id)) {
				slot.unknownSince = null;
			}
			else if (slot.unknownSince == null) {
				slot.unknownSince = now;
			}
			else if (now - slot.unknownSince >= KnownServices.FORGET_AFTER.toNanos()) {
				forget(slot);
			}
		}
	}

	private void forget(ServiceSlots.Slot slot) {
		this.slots.remove(slot);
		if (slot.watch != null) {
			this.discovery.unwatch(slot.watch);
		}
		ServiceRuntime runtime = slot.runtime;
		if (runtime == null) {
			return;
		}
		slot.ready.complete(runtime);
		Upstream upstream = runtime.upstreamOrNull();
		if (upstream != null) {
			this.retirement.retire(upstream);
		}
		this.listeners.forEach((listener) -> listener.runtimeRemoved(runtime));
		logger
			.info("Service " + slot.id + " is no longer named by a route, the configuration or a split, nor listed by "
					+ "discovery; removed it, its pools close once no request uses them");
	}

	private void publish(ServiceRuntime runtime, Snapshot<Member> previous, Snapshot<Member> next) {
		this.listeners.forEach((listener) -> listener.snapshotChanged(runtime, previous, next));
	}

}
