package dev.gatewaylb.actuate;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.gatewaylb.balance.EndpointState;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.GatewayLbSettings;
import dev.gatewaylb.gateway.LiveSettings;
import dev.gatewaylb.gateway.SplitCounters;
import dev.gatewaylb.gateway.SplitSettings;
import dev.gatewaylb.split.Split;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

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

	private final MeterRegistry meterRegistry;

	private final SplitCounters splitCounters;

	private final Map<String, Map<String, List<Meter>>> endpointMeters = new HashMap<>();

	private final Map<String, Meter> splitMeters = new HashMap<>();

	/**
	 * Registers the meters of every split and refresh, and of every endpoint as it joins.
	 * @param meterRegistry the meter registry
	 * @param registry every service's balancer
	 * @param settings the settings in force
	 * @param splitCounters each split's requests per target
	 */
	public GatewayLbMetrics(MeterRegistry meterRegistry, BalancerRegistry registry, LiveSettings settings,
			SplitCounters splitCounters) {
		this.meterRegistry = meterRegistry;
		this.splitCounters = splitCounters;
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

	private List<Meter> register(String serviceId, EndpointState state) {
		List<Meter> meters = new ArrayList<>(2);
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

	private synchronized void splitsChanged(GatewayLbSettings settings) {
		Set<String> configured = new HashSet<>();
		for (SplitSettings split : settings.splits().values()) {
			Split choice = split.split();
			for (Split.Target target : choice.targets()) {
				String key = choice.name() + '\u0000' + target.service();
				configured.add(key);
				this.splitMeters.computeIfAbsent(key,
						(k) -> FunctionCounter
							.builder(SPLIT_PICKS, this.splitCounters.counter(choice.name(), target.service()),
									java.util.concurrent.atomic.LongAdder::sum)
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
