package dev.gatewaylb.internal.actuate;

import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.feature.Metered;
import dev.gatewaylb.internal.runtime.RuntimeListener;
import dev.gatewaylb.internal.runtime.ServiceCounters;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.internal.upstream.Upstreams;
import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.split.Split;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.jspecify.annotations.Nullable;
import reactor.netty.resources.ConnectionPoolMetrics;

/**
 * gateway-lb's Micrometer meters. Tag values come from configuration and discovery only
 * (service ids, endpoint addresses, split and target names), never from requests, so the
 * number of series is bounded by the configured services and discovered endpoints.
 * <p>
 * Service meters are registered when a service gets its first runtime; endpoint meters
 * when an endpoint joins a service's set and removed when it leaves, and the pool meters
 * of an endpoint with its pool; split meters when a split target is configured and
 * removed when it is not any more. Registration runs on the control thread (pools
 * included: Reactor Netty reports a pool opening inside a request's acquire, and
 * {@link Upstreams} hands that report to the control thread) and on the refresh thread,
 * never on an event loop and never by a request. Meters read the runtimes' own counters,
 * so nothing is built or updated on the request path.
 */
public final class GatewayLbMetrics implements RuntimeListener {

	static final String PICKS = "gateway.lb.picks";

	static final String IN_FLIGHT = "gateway.lb.inflight";

	static final String SPLIT_PICKS = "gateway.lb.split.picks";

	static final String REFRESHES = "gateway.lb.refreshes";

	static final String REJECTED = "gateway.lb.rejected";

	static final String CONCURRENCY_LIMIT = "gateway.lb.concurrency.limit";

	static final String EJECTIONS = "gateway.lb.ejections";

	static final String FAIL_OPEN = "gateway.lb.fail.open";

	static final String RETRIES = "gateway.lb.retries";

	static final String DISCOVERY_REJECTED = "gateway.lb.discovery.rejected";

	static final String LOCALITY_REQUESTS = "gateway.lb.locality.requests";

	static final String UNKNOWN_SERVICES = "gateway.lb.unknown.services";

	static final String SLOW_CLIENTS = "gateway.lb.slow.clients";

	static final String ROLLOUT_PERCENT = "gateway.lb.rollout.percent";

	static final String ROLLOUT_TRANSITIONS = "gateway.lb.rollout.transitions";

	/**
	 * Reactor Netty's own connection pool meters, same names and tags.
	 */
	static final String POOL = "reactor.netty.connection.provider";

	static final String BORROWED = "gateway.lb.pool.borrowed";

	private final MeterRegistry meterRegistry;

	private final SplitCounters splitCounters;

	private final SplitRollouts rollouts;

	private final Map<String, Map<String, List<Meter>>> endpointMeters = new HashMap<>();

	private final Map<String, Meter> splitMeters = new HashMap<>();

	/**
	 * Pool meters by provider name and pool id: Reactor Netty's id is the hash of the
	 * remote address, the same in a provider and in the one a refresh built to replace it
	 * while both are open.
	 */
	private final Map<String, List<Meter>> poolMeters = new HashMap<>();

	private final Map<String, List<Meter>> serviceMeters = new HashMap<>();

	/**
	 * The features whose meters each service has, by their state's type.
	 */
	private final Map<String, Set<Class<?>>> serviceFeatures = new HashMap<>();

	/**
	 * Each service's meter of requests per priority level, registered when a level of
	 * that priority first appears and kept while the service is.
	 */
	private final Map<String, Map<Integer, Meter>> levelMeters = new HashMap<>();

	/**
	 * Registers the meters of every split and refresh, and of every service and endpoint
	 * as it appears.
	 * @param meterRegistry the meter registry
	 * @param runtimes every service's runtime
	 * @param upstreams builds the per-service connection pools
	 * @param settings the settings in force
	 * @param splitCounters each split's requests per target
	 * @param rollouts the splits' rollouts
	 */
	public GatewayLbMetrics(MeterRegistry meterRegistry, ServiceRuntimes runtimes, Upstreams upstreams,
			LiveSettings settings, SplitCounters splitCounters, SplitRollouts rollouts) {
		this.meterRegistry = meterRegistry;
		this.splitCounters = splitCounters;
		this.rollouts = rollouts;
		upstreams.addListener(new PoolMeters());
		FunctionCounter.builder(REFRESHES, settings, LiveSettings::appliedRefreshes)
			.tag("outcome", "applied")
			.description("Refreshes of gateway.lb put in force")
			.register(meterRegistry);
		FunctionCounter.builder(REFRESHES, settings, LiveSettings::rejectedRefreshes)
			.tag("outcome", "rejected")
			.description("Refreshes of gateway.lb rejected as invalid; the previous settings stayed")
			.register(meterRegistry);
		FunctionCounter.builder(UNKNOWN_SERVICES, runtimes, ServiceRuntimes::unknownNamed)
			.description("Requests that named a service no route, configuration, split or discovery knows; "
					+ "answered 503, nothing tracked")
			.register(meterRegistry);
		settings.onApply(this::splitsChanged);
		runtimes.addListener(this);
	}

	@Override
	public synchronized void runtimeChanged(@Nullable ServiceRuntime previous, ServiceRuntime next) {
		List<Meter> service = this.serviceMeters.get(next.id());
		if (service == null) {
			service = registerService(next.id(), next.counters());
			this.serviceMeters.put(next.id(), service);
			endpointsChanged(next.id(), next.snapshot());
		}
		// The meters of a feature a service turns on, from the runtime that turns it on:
		// a service that never turns a feature on has no series of it.
		Set<Class<?>> features = this.serviceFeatures.computeIfAbsent(next.id(), (id) -> new HashSet<>());
		for (Object state : next.features()) {
			if (state instanceof Metered metered && !features.contains(state.getClass())) {
				List<Meter> meters = metered.register(this.meterRegistry, next.id());
				if (!meters.isEmpty()) {
					features.add(state.getClass());
					service.addAll(meters);
				}
			}
		}
	}

	@Override
	public synchronized void runtimeRemoved(ServiceRuntime runtime) {
		this.serviceFeatures.remove(runtime.id());
		List<Meter> service = this.serviceMeters.remove(runtime.id());
		if (service != null) {
			service.forEach(this.meterRegistry::remove);
		}
		Map<Integer, Meter> levels = this.levelMeters.remove(runtime.id());
		if (levels != null) {
			levels.values().forEach(this.meterRegistry::remove);
		}
		Map<String, List<Meter>> endpoints = this.endpointMeters.remove(runtime.id());
		if (endpoints != null) {
			endpoints.values().forEach((meters) -> meters.forEach(this.meterRegistry::remove));
		}
	}

	@Override
	public synchronized void snapshotChanged(ServiceRuntime runtime, Snapshot<Member> previous, Snapshot<Member> next) {
		endpointsChanged(runtime.id(), next);
	}

	private void endpointsChanged(String serviceId, Snapshot<Member> next) {
		Map<Integer, Meter> levels = this.levelMeters.computeIfAbsent(serviceId, (id) -> new HashMap<>());
		next.levelRequestCounters()
			.forEach((priority, count) -> levels.computeIfAbsent(priority,
					(p) -> FunctionCounter.builder(LOCALITY_REQUESTS, count, LongAdder::sum)
						.tags("service", serviceId, "priority", String.valueOf(p))
						.description("Requests sent to a priority level of a service with localities")
						.register(this.meterRegistry)));
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

	private List<Meter> registerService(String serviceId, ServiceCounters counters) {
		List<Meter> meters = new ArrayList<>(10);
		meters.add(FunctionCounter.builder(REJECTED, counters.saturated(), LongAdder::sum)
			.tags("service", serviceId, "reason", "saturated")
			.description("Requests answered 503 because the service's connection pool was saturated")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(REJECTED, counters.noEndpoint(), LongAdder::sum)
			.tags("service", serviceId, "reason", "no-endpoint")
			.description("Requests answered 503 (404 with use404) because the service had no endpoint to pick")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(REJECTED, counters.slowSenders(), LongAdder::sum)
			.tags("service", serviceId, "reason", "request-body-idle")
			.description("Requests answered 408 because the client's body went idle or fell below its minimum rate")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(SLOW_CLIENTS, counters.slowReaders(), LongAdder::sum)
			.tags("service", serviceId, "reason", "response-write-idle")
			.description("Clients cut off because they accepted no bytes of their answer for response-write-idle")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(SLOW_CLIENTS, counters.pastMaxDuration(), LongAdder::sum)
			.tags("service", serviceId, "reason", "max-duration")
			.description("Answers cut off because they still streamed max-duration after their request was sent")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(SLOW_CLIENTS, counters.slowReadersBelowRate(), LongAdder::sum)
			.tags("service", serviceId, "reason", "response-write-min-rate")
			.description("Clients cut off because they took their answer slower than response-write-min-rate")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(SLOW_CLIENTS, counters.slowSenders(), LongAdder::sum)
			.tags("service", serviceId, "reason", "request-body")
			.description("Clients answered 408 because their request body went idle or fell below its minimum rate")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(FAIL_OPEN, counters.failOpen(), LongAdder::sum)
			.tags("service", serviceId)
			.description("Picks made while every endpoint was ejected or unhealthy")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(RETRIES, counters.retried(), LongAdder::sum)
			.tags("service", serviceId, "outcome", "retried")
			.description("Retries sent, each to another endpoint while one remained")
			.register(this.meterRegistry));
		meters.add(FunctionCounter.builder(RETRIES, counters.refusedByBudget(), LongAdder::sum)
			.tags("service", serviceId, "outcome", "budget")
			.description("Retries the retry budget refused; the original failure was answered")
			.register(this.meterRegistry));
		counters.discoveryRejected()
			.forEach((rejection, count) -> meters.add(FunctionCounter.builder(DISCOVERY_REJECTED, count, LongAdder::sum)
				.tags("service", serviceId, "reason", rejection.tag())
				.description("Instances of discovery's answers not balanced (an invalid host or port, a duplicate "
						+ "address), counted at every poll that lists them")
				.register(this.meterRegistry)));
		return meters;
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
		meters.add(Gauge.builder(CONCURRENCY_LIMIT, state, GatewayLbMetrics::concurrencyLimit)
			.tags("service", serviceId, "endpoint", state.address())
			.description("Requests an endpoint may have in flight by its concurrency limiter; NaN without a limit")
			.register(this.meterRegistry));
		return meters;
	}

	private static double concurrencyLimit(EndpointState state) {
		int limit = state.concurrencyLimit();
		return (limit == EndpointState.UNLIMITED) ? Double.NaN : limit;
	}

	/**
	 * Registers Reactor Netty's pool gauges for each per-endpoint pool of a service, on
	 * the control thread.
	 */
	private final class PoolMeters implements Upstreams.PoolListener {

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
			if (metrics instanceof Upstreams.LoopLocalPool loopLocal) {
				meters = new ArrayList<>(meters);
				meters.add(FunctionCounter.builder(BORROWED, loopLocal, Upstreams.LoopLocalPool::borrowed)
					.tags(tags.and("service", serviceId))
					.description("Connections of the endpoint taken from another event loop's pool "
							+ "(pool.loop-affinity: preferred; all of its own loop's were in use and the cap was reached)")
					.register(GatewayLbMetrics.this.meterRegistry));
			}
			synchronized (GatewayLbMetrics.this) {
				GatewayLbMetrics.this.poolMeters.put(poolName + "\u0000" + id, meters);
			}
		}

		@Override
		public void closed(String serviceId, String poolName, String id, SocketAddress remoteAddress) {
			List<Meter> meters;
			synchronized (GatewayLbMetrics.this) {
				meters = GatewayLbMetrics.this.poolMeters.remove(poolName + "\u0000" + id);
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
			if (split.rollout() != null) {
				registerRollout(choice.name(), configured);
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

	/**
	 * Registers a rollout's meters once; the key of each joins {@code configured}. They
	 * read the rollout registry by split name, so a rollout restarted by a refresh keeps
	 * its meters and its counts.
	 */
	private void registerRollout(String split, Set<String> configured) {
		String percent = split + '\u0000' + ROLLOUT_PERCENT;
		configured.add(percent);
		this.splitMeters.computeIfAbsent(percent,
				(k) -> Gauge.builder(ROLLOUT_PERCENT, this.rollouts, (rollouts) -> rollouts.percent(split))
					.tag("split", split)
					.description("A rollout's target's share of its split's traffic, in percent")
					.register(this.meterRegistry));
		for (Rollout.State state : Rollout.State.values()) {
			String key = split + '\u0000' + ROLLOUT_TRANSITIONS + '\u0000' + state.label();
			configured.add(key);
			this.splitMeters.computeIfAbsent(key, (k) -> FunctionCounter
				.builder(ROLLOUT_TRANSITIONS, this.rollouts, (rollouts) -> rollouts.transitions(split, state))
				.tags("split", split, "to", state.label())
				.description("Times a rollout entered a state; each start, new step and resume counts as progressing")
				.register(this.meterRegistry));
		}
	}

}
