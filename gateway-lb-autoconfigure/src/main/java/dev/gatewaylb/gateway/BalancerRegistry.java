package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.InstanceWeights;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.HashKey;
import dev.gatewaylb.gateway.settings.ServiceSettings;
import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import dev.gatewaylb.balance.Algorithm;
import dev.gatewaylb.balance.Balancer;
import dev.gatewaylb.balance.Endpoint;
import dev.gatewaylb.balance.InFlightGuard;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.health.OutlierDetection;
import dev.gatewaylb.split.Cookies;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.http.HttpHeaders;

/**
 * Every service's {@link Balancer}, created on a service's first request and fed the
 * instance list Spring Cloud LoadBalancer's supplier chain hands each request.
 * <p>
 * Lives in the application context, not in Spring Cloud's per-service child contexts, so
 * settings applied here reach every service at its next pick. A pick is lock-free: one
 * read of the settings, one map lookup, and, while neither the instance list nor the
 * settings changed (the supplier's cache returns the same list object), one read of the
 * current snapshot. A changed list or changed settings rebuild the balancer, carrying
 * per-endpoint state.
 */
public final class BalancerRegistry {

	/**
	 * An exchange attribute that, when present, is the consistent-hash key of the request
	 * and wins over {@code hash-key}.
	 */
	public static final String HASH_KEY_ATTRIBUTE = BalancerRegistry.class.getName() + ".hashKey";

	private static final Log logger = LogFactory.getLog(BalancerRegistry.class);

	private final ConcurrentMap<String, ServiceEntry> services = new ConcurrentHashMap<>();

	private final Set<String> reportedWeights = ConcurrentHashMap.newKeySet();

	private final LongSupplier nanoClock;

	private final LiveSettings settings;

	private final List<SnapshotListener> listeners = new CopyOnWriteArrayList<>();

	private final ServiceCounters failOpen = new ServiceCounters();

	/**
	 * Creates a registry. A service rebuilds at its first pick after the live settings
	 * changed, if its own settings did.
	 * @param settings the settings in force, read at every pick
	 * @param nanoClock a monotonic clock in nanoseconds
	 */
	public BalancerRegistry(LiveSettings settings, LongSupplier nanoClock) {
		this.settings = Objects.requireNonNull(settings, "settings");
		this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
	}

	/**
	 * Returns the balancer clock's current time, for latency samples.
	 * @return nanoseconds
	 */
	public long nanoTime() {
		return this.nanoClock.getAsLong();
	}

	/**
	 * Adds a listener told of every new snapshot, off the pick path.
	 * @param listener the listener
	 */
	public void addListener(SnapshotListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	/**
	 * Reports that an attempt succeeded: the endpoint's failure streak ends.
	 * @param serviceId the service id
	 * @param guard the attempt's guard
	 */
	public void succeeded(String serviceId, InFlightGuard guard) {
		this.settings.get()
			.forService(serviceId)
			.health()
			.passive()
			.succeeded(guard.endpoint(), this.nanoClock.getAsLong());
	}

	/**
	 * Reports that an attempt failed (connect error, timeout, a body that broke off, a
	 * 5xx answer); passive health may eject the endpoint, which takes effect at once.
	 * @param serviceId the service id
	 * @param guard the attempt's guard
	 */
	public void failed(String serviceId, InFlightGuard guard) {
		ServiceEntry entry = this.services.get(serviceId);
		if (entry == null) {
			return;
		}
		OutlierDetection detection = this.settings.get().forService(serviceId).health().passive();
		long now = this.nanoClock.getAsLong();
		if (detection.failed(guard.endpoint(), entry.balancer.snapshot(), now)) {
			logger.warn("Ejected " + guard.endpoint().address() + " of service " + serviceId + " for "
					+ (guard.endpoint().ejectedUntilNanos() - now) / 1_000_000 + " ms after "
					+ detection.consecutiveFailures() + " failures in a row");
			entry.reevaluate();
		}
	}

	/**
	 * Re-evaluates a service's endpoints after active health checks changed one.
	 * @param serviceId the service id
	 */
	public void healthChanged(String serviceId) {
		ServiceEntry entry = this.services.get(serviceId);
		if (entry != null) {
			entry.reevaluate();
		}
	}

	/**
	 * Returns how many picks of a service went out failing open.
	 * @param serviceId the service id
	 * @return the counter
	 */
	public LongAdder failOpenPicks(String serviceId) {
		return this.failOpen.of(serviceId);
	}

	private void failOpen(String serviceId, ServiceEntry entry) {
		this.failOpen.of(serviceId).increment();
		if (entry.warnFailOpen()) {
			logger.warn("Every endpoint of service " + serviceId
					+ " is ejected or unhealthy; sending requests to all of them (fail open)");
		}
	}

	/**
	 * Starts or stops draining an endpoint of a service: it takes no new picks, its
	 * requests in flight finish, and it stays drained across refreshes while it stays in
	 * the set.
	 * @param serviceId the service id
	 * @param address the endpoint's {@code host:port}
	 * @param drain whether to drain
	 * @return whether the service has that endpoint
	 */
	public boolean drain(String serviceId, String address, boolean drain) {
		ServiceEntry entry = this.services.get(serviceId);
		return entry != null && entry.drain(address, drain);
	}

	/**
	 * Returns the current snapshot of a service that has served a request.
	 * @param serviceId the service id
	 * @return the snapshot, or {@code null} if the service has not been picked from
	 */
	public @Nullable Snapshot<ServiceInstance> snapshot(String serviceId) {
		ServiceEntry entry = this.services.get(serviceId);
		return (entry != null) ? entry.balancer.snapshot() : null;
	}

	/**
	 * Returns the current snapshot of every service that has served a request.
	 * @return snapshots by service id, sorted
	 */
	public Map<String, Snapshot<ServiceInstance>> snapshots() {
		Map<String, Snapshot<ServiceInstance>> snapshots = new TreeMap<>();
		this.services.forEach((id, entry) -> snapshots.put(id, entry.balancer.snapshot()));
		return snapshots;
	}

	/**
	 * Selects an instance of a service for one request and, when the request belongs to a
	 * gateway exchange, hands the in-flight guard to the exchange's lease.
	 * @param serviceId the service id
	 * @param instances the instances the supplier chain offers
	 * @param request the request, or {@code null}
	 * @return the chosen instance, or an empty response when none can be picked
	 */
	public Response<ServiceInstance> choose(String serviceId, List<ServiceInstance> instances,
			@Nullable RequestData request) {
		GatewayLbSettings current = this.settings.get();
		ServiceEntry entry = this.services.get(serviceId);
		if (entry == null) {
			// Off the hot path: computeIfAbsent allocates its lambda and may lock a bin.
			entry = this.services.computeIfAbsent(serviceId,
					(id) -> new ServiceEntry(id, new Balancer<>(current.forService(id).balancer(), this::describe,
							this.nanoClock, ThreadLocalRandom::current), this.listeners));
		}
		ServiceEntry.View view = entry.view(serviceId, instances, current);
		Snapshot<ServiceInstance> snapshot = entry.balancer.snapshot();
		ExchangeLease lease = (request != null) ? lease(request) : null;
		CharSequence key = (snapshot.settings().algorithm() == Algorithm.CONSISTENT_HASH)
				? hashKey(view.settings().hashKey(), request, lease, current) : null;
		// Outside a gateway exchange nothing reports when the request ends: load-aware
		// algorithms would see every endpoint idle, so such picks spread uniformly, and
		// count as picks but not as requests in flight.
		int index = (lease == null && snapshot.isLoadAware()) ? snapshot.selectUniformly() : snapshot.select(key);
		if (index >= 0 && lease != null && lease.tried(snapshot.endpoint(index).address())) {
			// A retry goes to an endpoint this exchange has not tried, while one remains.
			int untried = snapshot.selectAvoiding(lease::tried);
			index = (untried >= 0) ? untried : index;
		}
		if (snapshot.isFailOpen()) {
			failOpen(serviceId, entry);
		}
		if (index < 0) {
			return new EmptyResponse();
		}
		if (lease != null) {
			lease.hold(serviceId, snapshot.acquire(index));
		}
		else {
			snapshot.acquire(index).release();
		}
		return new DefaultResponse(snapshot.value(index));
	}

	private Endpoint describe(ServiceInstance instance) {
		String weight = instance.getMetadata().get(InstanceWeights.METADATA_KEY);
		int parsed = 1;
		try {
			parsed = InstanceWeights.parse(weight);
		}
		catch (IllegalArgumentException ex) {
			String address = Endpoint.address(instance.getHost(), instance.getPort());
			if (this.reportedWeights.add(instance.getServiceId() + "/" + address + "/" + weight)) {
				logger.warn("Instance " + address + " of service " + instance.getServiceId()
						+ " has an invalid metadata " + ex.getMessage() + "; balancing it with weight 1");
			}
		}
		return Endpoint.of(instance.getHost(), instance.getPort(), parsed);
	}

	private static @Nullable ExchangeLease lease(RequestData request) {
		Map<String, Object> attributes = request.getAttributes();
		return (attributes != null && attributes.get(ExchangeLease.ATTRIBUTE) instanceof ExchangeLease lease) ? lease
				: null;
	}

	private static @Nullable CharSequence hashKey(HashKey hashKey, @Nullable RequestData request,
			@Nullable ExchangeLease lease, GatewayLbSettings settings) {
		if (request == null) {
			return null;
		}
		Map<String, Object> attributes = request.getAttributes();
		if (attributes != null && attributes.get(HASH_KEY_ATTRIBUTE) instanceof CharSequence override) {
			return override;
		}
		HttpHeaders headers = request.getHeaders();
		String key = switch (hashKey.source()) {
			case CLIENT_IP -> ClientAddresses.resolve((lease != null) ? lease.remoteAddress() : null,
					(headers != null) ? headers.get("X-Forwarded-For") : null, settings.trustedProxies());
			case HEADER -> (headers != null) ? headers.getFirst(hashKey.name()) : null;
			case COOKIE -> (headers != null) ? Cookies.first(headers.get(HttpHeaders.COOKIE), hashKey.name()) : null;
		};
		return (key == null || key.isEmpty()) ? null : key;
	}

	/**
	 * Hears of every snapshot a service's balancer publishes.
	 */
	@FunctionalInterface
	public interface SnapshotListener {

		/**
		 * Called after a service's balancer published a new snapshot, on the thread that
		 * rebuilt it.
		 * @param serviceId the service id
		 * @param previous the snapshot before
		 * @param next the snapshot now in force
		 */
		void onSnapshot(String serviceId, Snapshot<ServiceInstance> previous, Snapshot<ServiceInstance> next);

	}

	/**
	 * One service's balancer and the inputs its current snapshot was built from.
	 * <p>
	 * The view records which instance list and settings the balancer was last built from,
	 * and changes by compare-and-set only, so a stale writer cannot overwrite a newer
	 * view. The snapshot itself is always read from the balancer. One thread rebuilds at
	 * a time; while it does, other picks keep using the previous snapshot instead of
	 * waiting on an event loop.
	 */
	private static final class ServiceEntry {

		private final String serviceId;

		private final Balancer<ServiceInstance> balancer;

		private final List<SnapshotListener> listeners;

		private final AtomicReference<@Nullable View> view = new AtomicReference<>();

		private final AtomicBoolean rebuilding = new AtomicBoolean();

		ServiceEntry(String serviceId, Balancer<ServiceInstance> balancer, List<SnapshotListener> listeners) {
			this.serviceId = serviceId;
			this.balancer = balancer;
			this.listeners = listeners;
		}

		View view(String serviceId, List<ServiceInstance> instances, GatewayLbSettings settings) {
			while (true) {
				View current = this.view.get();
				if (current != null && current.instances == instances && current.source == settings) {
					return current;
				}
				ServiceSettings wanted = settings.forService(serviceId);
				if (current != null && current.settings.equals(wanted) && current.instances.equals(instances)) {
					// Equal inputs in new objects: remember them so the next pick takes
					// the
					// fast path.
					View same = new View(instances, settings, wanted);
					if (this.view.compareAndSet(current, same)) {
						return same;
					}
					continue;
				}
				if (!this.rebuilding.compareAndSet(false, true)) {
					if (current != null) {
						return current;
					}
					Thread.onSpinWait();
					continue;
				}
				try {
					return rebuild(this.view.get(), instances, settings, wanted);
				}
				finally {
					this.rebuilding.set(false);
				}
			}
		}

		private View rebuild(@Nullable View current, List<ServiceInstance> instances, GatewayLbSettings source,
				ServiceSettings wanted) {
			Snapshot<ServiceInstance> previous = this.balancer.snapshot();
			if (current != null && current.instances.equals(instances)) {
				if (!current.settings.equals(wanted)) {
					published(previous, this.balancer.update(wanted.balancer()));
				}
			}
			else {
				published(previous, this.balancer.update(instances, wanted.balancer()));
			}
			View next = new View(instances, source, wanted);
			this.view.set(next);
			return next;
		}

		/**
		 * Whether the fail-open warning is due: once per episode.
		 */
		private final AtomicBoolean failingOpen = new AtomicBoolean();

		boolean warnFailOpen() {
			return this.failingOpen.compareAndSet(false, true);
		}

		void reevaluate() {
			Snapshot<ServiceInstance> previous = this.balancer.snapshot();
			Snapshot<ServiceInstance> next = this.balancer.reevaluate();
			if (!next.isFailOpen()) {
				this.failingOpen.set(false);
			}
			published(previous, next);
		}

		boolean drain(String address, boolean drain) {
			Snapshot<ServiceInstance> previous = this.balancer.snapshot();
			Snapshot<ServiceInstance> next = this.balancer.drain(address, drain);
			if (next == null) {
				return false;
			}
			if (next != previous) {
				published(previous, next);
			}
			return true;
		}

		private void published(Snapshot<ServiceInstance> previous, Snapshot<ServiceInstance> next) {
			for (SnapshotListener listener : this.listeners) {
				listener.onSnapshot(this.serviceId, previous, next);
			}
		}

		private record View(List<ServiceInstance> instances, GatewayLbSettings source, ServiceSettings settings) {
		}

	}

}
