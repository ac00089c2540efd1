package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.settings.HealthSettings;
import dev.gatewaylb.internal.upstream.Outcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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
 * The {@code active-health} job, every {@link #TICK} on the control thread, starts the
 * checks that are due, so an interval is kept to within a tick; a service's next checks
 * start only once all of its previous ones ended. Each probe's answer arrives on the
 * probe client's event loop and marks its endpoint at once; when that changed the
 * endpoint's health, the balancer is asked for a rebuild then, not when the service's
 * slowest probe ends: an endpoint seen unhealthy stops getting picks while a probe of
 * another endpoint still waits for its timeout.
 */
public final class ActiveHealthChecks {

	/**
	 * How often the job looks for checks that are due.
	 */
	static final Duration TICK = Duration.ofMillis(250);

	private static final Log logger = LogFactory.getLog(ActiveHealthChecks.class);

	private final ServiceRuntimes runtimes;

	private final ControlThread control;

	private final Separately separately = new Separately("active-health");

	/**
	 * When each service's checks last started. Control thread only.
	 */
	private final Map<String, Long> lastRun = new HashMap<>();

	/**
	 * The services whose checks are on their way: added on the control thread, removed on
	 * the event loop of the last probe to end.
	 */
	private final Set<String> running = ConcurrentHashMap.newKeySet();

	private ControlThread.@Nullable Job job;

	/**
	 * Creates the checks; nothing is probed until {@link #start()}.
	 * @param runtimes every service's runtime
	 * @param control the control thread, whose clock the intervals are measured by
	 */
	public ActiveHealthChecks(ServiceRuntimes runtimes, ControlThread control) {
		this.runtimes = Objects.requireNonNull(runtimes, "runtimes");
		this.control = Objects.requireNonNull(control, "control");
	}

	/**
	 * Starts the {@code active-health} job; idempotent.
	 */
	public synchronized void start() {
		if (this.job == null) {
			this.job = this.control.every("active-health", TICK, this::tick);
		}
	}

	private void tick() {
		long now = this.control.nanoTime();
		this.separately.forEach(this.runtimes.all(), ServiceRuntime::id, (runtime) -> {
			HealthSettings.Active active = runtime.settings().health().active();
			if (!active.enabled() || !runtime.isBalancedHere()) {
				return;
			}
			String service = runtime.id();
			Long last = this.lastRun.get(service);
			if ((last != null && now - last < active.interval().toNanos()) || !this.running.add(service)) {
				return;
			}
			this.lastRun.put(service, now);
			try {
				checkAll(runtime, active).doFinally((signal) -> this.running.remove(service)).subscribe();
			}
			catch (RuntimeException | Error ex) {
				this.running.remove(service);
				throw ex;
			}
		});
	}

	private Mono<Void> checkAll(ServiceRuntime runtime, HealthSettings.Active active) {
		Snapshot<Member> snapshot = runtime.snapshot();
		return Flux.range(0, snapshot.size())
			.flatMap((i) -> check(runtime, snapshot.value(i), snapshot.state(i), active))
			.then();
	}

	private Mono<Void> check(ServiceRuntime runtime, Member member, EndpointState state, HealthSettings.Active active) {
		String url = (member.secure() ? "https://" : "http://") + state.address() + active.path();
		return runtime.upstream()
			.probeClient()
			.get()
			.uri(url)
			.responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
			.timeout(active.timeout())
			.map((status) -> (status >= 200 && status < 300) ? Verdict.HEALTHY : Verdict.UNHEALTHY)
			.onErrorResume((error) -> Mono.just(Outcome.isPoolRefusal(error) ? Verdict.UNKNOWN : Verdict.UNHEALTHY))
			.doOnNext((verdict) -> {
				if (verdict != Verdict.UNKNOWN && record(runtime, state, verdict == Verdict.HEALTHY, url)) {
					// At once, from this probe's event loop: the rebuild itself runs on
					// the control thread.
					runtime.balancer().reevaluateLater();
				}
			})
			.then();
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
