package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.HealthSettings;
import dev.gatewaylb.gateway.settings.UpstreamSettings;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.gatewaylb.balance.EndpointState;
import dev.gatewaylb.balance.Snapshot;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.context.SmartLifecycle;

/**
 * Active health checks: for every service with {@code health.active.enabled}, an HTTP GET
 * of {@code health.active.path} to each of its endpoints every {@code interval}, through
 * the service's own client (its TLS roots, its connect timeout). A 2xx answer within
 * {@code timeout} is healthy; anything else, including no answer, is not. Unhealthy
 * endpoints get no picks until a check passes again; each change is logged once.
 * <p>
 * Services are checked once they have served a request (their endpoints are known then).
 * A tick every {@value #TICK_MILLIS} ms starts the checks that are due, so an interval is
 * kept to within a tick.
 */
public final class ActiveHealthChecks implements SmartLifecycle {

	static final long TICK_MILLIS = 250;

	private static final Log logger = LogFactory.getLog(ActiveHealthChecks.class);

	private final BalancerRegistry registry;

	private final UpstreamClients clients;

	private final LiveSettings settings;

	private final Map<String, Long> lastRun = new ConcurrentHashMap<>();

	private final Map<String, Boolean> running = new ConcurrentHashMap<>();

	private volatile @Nullable Disposable ticks;

	/**
	 * Creates the checks.
	 * @param registry every service's balancer
	 * @param clients the per-service clients
	 * @param settings the settings in force
	 */
	public ActiveHealthChecks(BalancerRegistry registry, UpstreamClients clients, LiveSettings settings) {
		this.registry = registry;
		this.clients = clients;
		this.settings = settings;
	}

	@Override
	public void start() {
		this.ticks = Flux.interval(Duration.ofMillis(TICK_MILLIS)).onBackpressureDrop().subscribe((tick) -> tick());
	}

	@Override
	public void stop() {
		Disposable ticks = this.ticks;
		if (ticks != null) {
			ticks.dispose();
		}
		this.ticks = null;
	}

	@Override
	public boolean isRunning() {
		return this.ticks != null;
	}

	void tick() {
		long now = this.registry.nanoTime();
		this.registry.snapshots().forEach((service, snapshot) -> {
			HealthSettings.Active active = this.settings.get().forService(service).health().active();
			if (!active.enabled()) {
				return;
			}
			Long last = this.lastRun.get(service);
			if ((last != null && now - last < active.interval().toNanos())
					|| this.running.putIfAbsent(service, true) != null) {
				return;
			}
			this.lastRun.put(service, now);
			checkAll(service, snapshot, active).doFinally((signal) -> this.running.remove(service)).subscribe();
		});
	}

	private Mono<Void> checkAll(String service, Snapshot<ServiceInstance> snapshot, HealthSettings.Active active) {
		UpstreamSettings upstream = this.settings.get().forService(service).upstream();
		return Flux.range(0, snapshot.size())
			.flatMap((i) -> check(service, snapshot.value(i), snapshot.state(i), active, upstream))
			.reduce(false, (changed, one) -> changed || one)
			.doOnNext((changed) -> {
				if (changed) {
					this.registry.healthChanged(service);
				}
			})
			.then();
	}

	private Mono<Boolean> check(String service, ServiceInstance instance, EndpointState state,
			HealthSettings.Active active, UpstreamSettings upstream) {
		String url = (instance.isSecure() ? "https://" : "http://") + state.address() + active.path();
		return this.clients.client(service, upstream)
			.get()
			.uri(url)
			.responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
			.timeout(active.timeout())
			.map((status) -> status >= 200 && status < 300)
			.onErrorReturn(false)
			.map((healthy) -> {
				boolean changed = state.markHealthy(healthy);
				if (changed) {
					if (healthy) {
						logger.info("Endpoint " + state.address() + " of service " + service
								+ " passes its health check again");
					}
					else {
						logger.warn("Endpoint " + state.address() + " of service " + service
								+ " failed its health check (" + url + "); it gets no requests until it passes");
					}
				}
				return changed;
			});
	}

}
