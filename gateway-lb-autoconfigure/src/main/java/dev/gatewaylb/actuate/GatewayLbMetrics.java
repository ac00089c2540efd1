package dev.gatewaylb.actuate;

import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

import dev.gatewaylb.balance.EndpointState;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.RetryFilter;
import dev.gatewaylb.gateway.SplitCounters;
import dev.gatewaylb.gateway.settings.SplitSettings;
import dev.gatewaylb.gateway.UpstreamClients;
import dev.gatewaylb.split.Split;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.jspecify.annotations.Nullable;
import reactor.netty.resources.ConnectionPoolMetrics;

import org.springframework.cloud.client.ServiceInstance;

/**
 * gateway-lb's Micrometer meters. Tag values come from configuration and discovery only
 * (service ids, endpoint addresses, split and target names), never from requests, so the
 * number of series is bounded by the configured services and discovered endpoints.
 * <p>
 * Endpoint meters are registered when an endpoint joins a service's set and removed when
 * it leaves; split meters when a split target is configured and removed when it is not
 * any more. Meters read the balancer's own counters, so nothing is built or updated on
 * the request path.
 */
public final class GatewayLbMetrics implements BalancerRegistry.SnapshotListener {

	static final String PICKS = "gateway.lb.picks";

	static final String IN_FLIGHT = "gateway.lb.inflight";

	static final String SPLIT_PICKS = "gateway.lb.split.picks";

	static final String REFRESHES = "gateway.lb.refreshes";

	static final String REJECTED = "gateway.lb.rejected";

	static final String EJECTIONS = "gateway.lb.ejections";

	static final String FAIL_OPEN = "gateway.lb.fail.open";

	static final String RETRIES = "gateway.lb.retries";

	/**
	 * Reactor Netty's own connection pool meters, same names and tags.
	 */
	static final String POOL = "reactor.netty.connection.provider";

	private final MeterRegistry meterRegistry;

	private final SplitCounters splitCounters;

	private final Map<String, Map<String, List<Meter>>> endpointMeters = new HashMap<>();

	private final Map<String, Meter> splitMeters = new HashMap<>();

	private final Map<String, List<Meter>> poolMeters = new HashMap<>();

	private final @Nullable UpstreamClients upstreams;

	private final BalancerRegistry registry;

	private final @Nullable RetryFilter retries;

	/**
	 * Registers the meters of every split and refresh, and of every endpoint as it joins.
	 * @param meterRegistry the meter registry
	 * @param registry every service's balancer
	 * @param settings the settings in force
	 * @param splitCounters each split's requests per target
	 * @param upstreams the per-service connection pools, or {@code null} without them
	 * @param retries the retry filter, or {@code null} without it
	 */
	public GatewayLbMetrics(MeterRegistry meterRegistry, BalancerRegistry registry, LiveSettings settings,
			SplitCounters splitCounters, @Nullable UpstreamClients upstreams, @Nullable RetryFilter retries) {
		this.meterRegistry = meterRegistry;
		this.registry = registry;
		this.retries = retries;
		this.splitCounters = splitCounters;
		this.upstreams = upstreams;
		if (upstreams != null) {
			upstreams.addListener(new PoolMeters());
		}
		FunctionCounter.builder(REFRESHES, settings, LiveSettings::appliedRefreshes)
			.tag("outcome", "applied")
			.description("Refreshes of gateway.lb put in force")
			.register(meterRegistry);
		FunctionCounter.builder(REFRESHES, settings, LiveSettings::rejectedRefreshes)
			.tag("outcome", "rejected")
			.description("Refreshes of gateway.lb rejected as invalid; the previous settings stayed")
			.register(meterRegistry);
		settings.onApply(this::splitsChanged);
		registry.addListener(this);
		registry.snapshots().forEach((service, snapshot) -> onSnapshot(service, snapshot, snapshot));
	}

	@Override
	public synchronized void onSnapshot(String serviceId, Snapshot<ServiceInstance> previous,
			Snapshot<ServiceInstance> next) {
		if (!this.endpointMeters.containsKey(serviceId)) {
			registerService(serviceId);
		}
		Map<String, List<Meter>> registered = this.endpointMeters.computeIfAbsent(serviceId, (id) -> new HashMap<>());
		Set<String> present = new HashSet<>();
		for (int i = 0; i < next.size(); i++) {
			EndpointState state = next.state(i);
			present.add(state.address());
			registered.computeIfAbsent(state.address(), (address) -> register(serviceId, state));
		}
		registered.entrySet().removeIf((entry) -> {
			if (present.contains(entry.getKey())) {
				return false;
			}
			entry.getValue().forEach(this.meterRegistry::remove);
			return true;
		});
	}

	private void registerService(String serviceId) {
		if (this.upstreams != null) {
			FunctionCounter.builder(REJECTED, this.upstreams.saturated(serviceId), LongAdder::sum)
				.tags("service", serviceId, "reason", "saturated")
				.description("Requests answered 503 because the service's connection pool was saturated")
				.register(this.meterRegistry);
		}
		FunctionCounter.builder(FAIL_OPEN, this.registry.failOpenPicks(serviceId), LongAdder::sum)
			.tags("service", serviceId)
			.description("Picks made while every endpoint was ejected or unhealthy")
			.register(this.meterRegistry);
		if (this.retries != null) {
			FunctionCounter.builder(RETRIES, this.retries.retried(serviceId), LongAdder::sum)
				.tags("service", serviceId, "outcome", "retried")
				.description("Retries sent, each to another endpoint while one remained")
				.register(this.meterRegistry);
			FunctionCounter.builder(RETRIES, this.retries.refusedByBudget(serviceId), LongAdder::sum)
				.tags("service", serviceId, "outcome", "budget")
				.description("Retries the retry budget refused; the original failure was answered")
				.register(this.meterRegistry);
		}
	}

	private List<Meter> register(String serviceId, EndpointState state) {
		List<Meter> meters = new ArrayList<>(3);
		meters.add(FunctionCounter.builder(EJECTIONS, state, EndpointState::ejections)
			.tags("service", serviceId, "endpoint", state.address())
			.description("Times passive health ejected an endpoint")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(PICKS, state, EndpointState::picks)
			.tags("service", serviceId, "endpoint", state.address())
			.description("Requests the balancer sent to an endpoint")
			.register(this.meterRegistry));
		meters.add(Gauge.builder(IN_FLIGHT, state, EndpointState::inFlight)
			.tags("service", serviceId, "endpoint", state.address())
			.description("Requests picked for an endpoint and not yet finished")
			.register(this.meterRegistry));
		return meters;
	}

	/**
	 * Registers Reactor Netty's pool gauges for each per-endpoint pool of a service.
	 */
	private final class PoolMeters implements UpstreamClients.PoolListener {

		@Override
		public void opened(String serviceId, String poolName, String id, SocketAddress remoteAddress,
				ConnectionPoolMetrics metrics) {
			Tags tags = Tags.of("name", poolName, "id", id, "remote.address", remoteAddress.toString());
			List<Meter> meters = List.of(
					gauge("total.connections", tags, metrics, ConnectionPoolMetrics::allocatedSize),
					gauge("active.connections", tags, metrics, ConnectionPoolMetrics::acquiredSize),
					gauge("idle.connections", tags, metrics, ConnectionPoolMetrics::idleSize),
					gauge("pending.connections", tags, metrics, ConnectionPoolMetrics::pendingAcquireSize),
					gauge("max.connections", tags, metrics, ConnectionPoolMetrics::maxAllocatedSize),
					gauge("max.pending.connections", tags, metrics, ConnectionPoolMetrics::maxPendingAcquireSize));
			synchronized (GatewayLbMetrics.this) {
				GatewayLbMetrics.this.poolMeters.put(id, meters);
			}
		}

		@Override
		public void closed(String serviceId, String poolName, String id, SocketAddress remoteAddress) {
			List<Meter> meters;
			synchronized (GatewayLbMetrics.this) {
				meters = GatewayLbMetrics.this.poolMeters.remove(id);
			}
			if (meters != null) {
				meters.forEach(GatewayLbMetrics.this.meterRegistry::remove);
			}
		}

		private Meter gauge(String name, Tags tags, ConnectionPoolMetrics metrics,
				ToDoubleFunction<ConnectionPoolMetrics> value) {
			return Gauge.builder(POOL + "." + name, metrics, value)
				.tags(tags)
				.register(GatewayLbMetrics.this.meterRegistry);
		}

	}

	private synchronized void splitsChanged(GatewayLbSettings settings) {
		Set<String> configured = new HashSet<>();
		for (SplitSettings split : settings.splits().values()) {
			Split choice = split.split();
			for (Split.Target target : choice.targets()) {
				String key = choice.name() + '\u0000' + target.service();
				configured.add(key);
				this.splitMeters.computeIfAbsent(key, (k) -> FunctionCounter
					.builder(SPLIT_PICKS, this.splitCounters.counter(choice.name(), target.service()), LongAdder::sum)
					.tags("split", choice.name(), "target", target.service())
					.description("Requests a split sent to a target service")
					.register(this.meterRegistry));
			}
		}
		this.splitMeters.entrySet().removeIf((entry) -> {
			if (configured.contains(entry.getKey())) {
				return false;
			}
			this.meterRegistry.remove(entry.getValue());
			return true;
		});
	}

}
