package dev.gatewaylb.gateway.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.gatewaylb.balance.EndpointState;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.settings.HealthSettings;
import dev.gatewaylb.gateway.upstream.Outcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.context.SmartLifecycle;

/**
 * Active health checks: for every service with {@code health.active.enabled}, an HTTP GET
 * of {@code health.active.path} to each of its endpoints every {@code interval}, through
 * the service's probe client: its TLS roots and connect timeout, and connections of its
 * own, so a probe never waits behind traffic and a saturated endpoint is not taken for a
 * dead one. A 2xx answer within {@code timeout} is healthy; anything else, including no
 * answer, is not, except a probe that could not get a connection from its own pool, which
 * says nothing. Unhealthy endpoints get no picks until a check passes again; each change
 * is logged once.
 * <p>
 * Every tracked service is checked, from start-up. A tick every {@value #TICK_MILLIS} ms
 * starts the checks that are due, so an interval is kept to within a tick.
 */
public final class ActiveHealthChecks implements SmartLifecycle {

	static final long TICK_MILLIS = 250;

	private static final Log logger = LogFactory.getLog(ActiveHealthChecks.class);

	private final ServiceRuntimes runtimes;

	private final Map<String, Long> lastRun = new ConcurrentHashMap<>();

	private final Map<String, Boolean> running = new ConcurrentHashMap<>();

	private volatile @Nullable Disposable ticks;

	/**
	 * Creates the checks.
	 * @param runtimes every service's runtime
	 */
	public ActiveHealthChecks(ServiceRuntimes runtimes) {
		this.runtimes = runtimes;
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
		long now = this.runtimes.nanoTime();
		for (ServiceRuntime runtime : this.runtimes.all()) {
			HealthSettings.Active active = runtime.settings().health().active();
			if (!active.enabled() || !runtime.isBalancedHere()) {
				continue;
			}
			String service = runtime.id();
			Long last = this.lastRun.get(service);
			if ((last != null && now - last < active.interval().toNanos())
					|| this.running.putIfAbsent(service, true) != null) {
				continue;
			}
			this.lastRun.put(service, now);
			checkAll(runtime, active).doFinally((signal) -> this.running.remove(service)).subscribe();
		}
	}

	private Mono<Void> checkAll(ServiceRuntime runtime, HealthSettings.Active active) {
		Snapshot<Member> snapshot = runtime.snapshot();
		return Flux.range(0, snapshot.size())
			.flatMap((i) -> check(runtime, snapshot.value(i), snapshot.state(i), active))
			.reduce(false, (changed, one) -> changed || one)
			.doOnNext((changed) -> {
				if (changed) {
					runtime.balancer().reevaluateLater();
				}
			})
			.then();
	}

	private Mono<Boolean> check(ServiceRuntime runtime, Member member, EndpointState state,
			HealthSettings.Active active) {
		String url = (member.secure() ? "https://" : "http://") + state.address() + active.path();
		return runtime.upstream()
			.probeClient()
			.get()
			.uri(url)
			.responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
			.timeout(active.timeout())
			.map((status) -> (status >= 200 && status < 300) ? Verdict.HEALTHY : Verdict.UNHEALTHY)
			.onErrorResume((error) -> Mono.just(Outcome.isPoolRefusal(error) ? Verdict.UNKNOWN : Verdict.UNHEALTHY))
			.map((verdict) -> verdict != Verdict.UNKNOWN && record(runtime, state, verdict == Verdict.HEALTHY, url));
	}

	private static boolean record(ServiceRuntime runtime, EndpointState state, boolean healthy, String url) {
		boolean changed = state.markHealthy(healthy);
		if (changed) {
			if (healthy) {
				logger.info("Endpoint " + state.address() + " of service " + runtime.id()
						+ " passes its health check again");
			}
			else {
				logger.warn("Endpoint " + state.address() + " of service " + runtime.id() + " failed its health check ("
						+ url + "); it gets no requests until it passes");
			}
		}
		return changed;
	}

	private enum Verdict {

		HEALTHY, UNHEALTHY, UNKNOWN

	}

}
