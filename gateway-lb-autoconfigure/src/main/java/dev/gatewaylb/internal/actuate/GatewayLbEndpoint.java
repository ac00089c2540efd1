package dev.gatewaylb.internal.actuate;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import dev.gatewaylb.internal.runtime.Drain;
import dev.gatewaylb.actuate.GatewayLbReport.DrainResult;
import dev.gatewaylb.actuate.GatewayLbReport.EndpointReport;
import dev.gatewaylb.actuate.GatewayLbReport.PoolReport;
import dev.gatewaylb.actuate.GatewayLbReport.RefreshReport;
import dev.gatewaylb.actuate.GatewayLbReport.RolloutReport;
import dev.gatewaylb.actuate.GatewayLbReport.ServiceReport;
import dev.gatewaylb.actuate.GatewayLbReport.ShadowReport;
import dev.gatewaylb.actuate.GatewayLbReport.SplitReport;
import dev.gatewaylb.actuate.GatewayLbReport.TargetReport;
import dev.gatewaylb.actuate.GatewayLbReport.VerdictReport;
import dev.gatewaylb.actuate.GatewayLbReport.WindowReport;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.affinity.AffinityState;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.locality.LocalityState;
import dev.gatewaylb.internal.loadreports.LoadReportsState;
import dev.gatewaylb.internal.mirror.MirrorState;
import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.internal.upstream.Upstream;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.internal.rollout.RolloutPlan;
import dev.gatewaylb.rollout.RolloutAction;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.split.Split;
import dev.gatewaylb.actuate.GatewayLbReport;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * {@code /actuator/gatewaylb}: what every service's balancer and every split is doing,
 * draining an endpoint, and acting on a split's rollout. A browser gets the same report
 * drawn as a live dashboard ({@link GatewayLbDashboard}). The report's records, the
 * endpoint's public API with its id, are {@link GatewayLbReport}'s.
 * <p>
 * Every service gateway-lb tracks appears from start-up: those routes name, those
 * configured under {@code gateway.lb.services}, split targets, and one discovery lists
 * once a request named it; its endpoints appear as soon as discovery listed them.
 * <p>
 * Read-only unless {@code management.endpoint.gatewaylb.access} is {@code unrestricted}:
 * draining answers 503 to everyone and a rollout action moves users between versions, so
 * either must be a deliberate choice. A split's override header is named only to an
 * authenticated reader: knowing it lets nobody move (only
 * {@code override-trusted-clients} do), but it is one fewer thing for an anonymous reader
 * to probe. So is why the last refresh was rejected ({@code lastError}), which can echo a
 * configuration value or a file path: an anonymous reader sees {@link #HIDDEN_ERROR}
 * instead (the log has the whole message). Spring Security's anonymous token is not
 * authenticated.
 */
@Endpoint(id = "gatewaylb", defaultAccess = Access.READ_ONLY)
public class GatewayLbEndpoint {

	/**
	 * What an anonymous reader sees in place of why the last refresh was rejected.
	 */
	public static final String HIDDEN_ERROR = "the last refresh was rejected; why is shown to authenticated readers "
			+ "only, and logged";

	private static final String ANONYMOUS_TOKEN = "org.springframework.security.authentication.AnonymousAuthenticationToken";

	private final ServiceRuntimes runtimes;

	private final LiveSettings settings;

	private final SplitCounters splitCounters;

	private final SplitRollouts rollouts;

	private final Supplier<FleetDecisions> fleet;

	/**
	 * Creates the endpoint.
	 * @param runtimes every service's runtime
	 * @param settings the settings in force
	 * @param splitCounters each split's requests per target
	 * @param rollouts the splits' rollouts
	 * @param fleet where drains are told to the other replicas,
	 * {@link FleetDecisions#NONE} for a gateway on its own
	 */
	public GatewayLbEndpoint(ServiceRuntimes runtimes, LiveSettings settings, SplitCounters splitCounters,
			SplitRollouts rollouts, Supplier<FleetDecisions> fleet) {
		this.runtimes = runtimes;
		this.settings = settings;
		this.splitCounters = splitCounters;
		this.rollouts = rollouts;
		this.fleet = fleet;
	}

	/**
	 * Returns every service and split.
	 * @param reader who reads: split override headers and why the last refresh was
	 * rejected are told to authenticated readers only
	 * @return the report
	 */
	@ReadOperation
	public GatewayLbReport report(SecurityContext reader) {
		boolean authenticated = isAuthenticated(reader);
		Map<String, ServiceReport> services = new TreeMap<>();
		this.runtimes.all().forEach((runtime) -> services.put(runtime.id(), service(runtime)));
		Map<String, SplitReport> splits = new TreeMap<>();
		this.settings.get()
			.splits()
			.values()
			.forEach((split) -> splits.put(split.split().name(), split(split, authenticated)));
		String lastError = this.settings.lastError();
		return new GatewayLbReport(this.settings.generation(),
				(lastError == null || authenticated) ? lastError : HIDDEN_ERROR,
				new RefreshReport(this.settings.appliedRefreshes(), this.settings.rejectedRefreshes()), services,
				splits);
	}

	/**
	 * Returns one service or split.
	 * @param name a service id or a split name
	 * @param reader who reads
	 * @return the service's or the split's report, or {@code null} (404) if there is
	 * neither
	 */
	@ReadOperation
	public @Nullable Object one(@Selector String name, SecurityContext reader) {
		GatewayLbReport report = report(reader);
		for (Map.Entry<String, SplitReport> split : report.splits().entrySet()) {
			if (split.getKey().equalsIgnoreCase(name)) {
				return split.getValue();
			}
		}
		for (Map.Entry<String, ServiceReport> service : report.services().entrySet()) {
			if (service.getKey().equalsIgnoreCase(name)) {
				return service.getValue();
			}
		}
		return null;
	}

	/**
	 * Acts on a service or a split. On a service, with {@code endpoint} and
	 * {@code drain}: starts or stops draining the endpoint (it takes no new requests,
	 * those in flight finish, and it stays drained across refreshes while discovery keeps
	 * it). On a split, with {@code rollout}: {@code pause}, {@code resume},
	 * {@code promote} or {@code roll-back} its rollout now.
	 * @param name the service id or the split's name
	 * @param endpoint the endpoint's {@code host:port}, to drain
	 * @param drain whether to drain
	 * @param force whether to drain beyond the service's
	 * {@code health.max-drain-percent}, for this call
	 * @param rollout the rollout action
	 * @return the endpoint's state or the rollout's report; 404 when there is no such
	 * endpoint or rollout, 400 when the request names neither action, 409 when the drain
	 * would leave more than {@code health.max-drain-percent} of the service draining
	 */
	@WriteOperation
	public WebEndpointResponse<?> act(@Selector String name, @Nullable String endpoint, @Nullable Boolean drain,
			@Nullable Boolean force, @Nullable String rollout) {
		if (rollout != null) {
			RolloutAction action = RolloutAction.of(rollout);
			if (action == null) {
				return new WebEndpointResponse<>(
						"rollout: " + rollout + " (expected: pause, resume, promote or roll-back)",
						WebEndpointResponse.STATUS_BAD_REQUEST);
			}
			RolloutTrack track = this.rollouts.act(name, action);
			if (track == null) {
				return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
			}
			return new WebEndpointResponse<>(rollout(track));
		}
		if (endpoint == null || drain == null) {
			return new WebEndpointResponse<>(
					"expected: {\"endpoint\": \"host:port\", \"drain\": true|false} or {\"rollout\": \"pause|resume|promote|roll-back\"}",
					WebEndpointResponse.STATUS_BAD_REQUEST);
		}
		boolean forced = Boolean.TRUE.equals(force);
		Drain done = this.runtimes.drain(name, endpoint, drain, forced);
		if (done == Drain.NOT_AN_ENDPOINT) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		if (done == Drain.OVER_MAX_DRAIN_PERCENT) {
			return new WebEndpointResponse<>("draining " + endpoint + " would leave more than health.max-drain-percent"
					+ " of the endpoints of " + name + " draining; send \"force\": true to drain it anyway", 409);
		}
		this.fleet.get().drain(name, endpoint, drain, forced);
		return new WebEndpointResponse<>(new DrainResult(name, endpoint, drain ? "draining" : "healthy"));
	}

	private static @Nullable Double successRate(double percent) {
		return Double.isNaN(percent) ? null : percent;
	}

	private ServiceReport service(ServiceRuntime runtime) {
		Snapshot<Member> snapshot = runtime.snapshot();
		BalancerSettings balancer = snapshot.settings();
		List<EndpointReport> endpoints = new ArrayList<>();
		long now = this.runtimes.nanoTime();
		Upstream upstream = runtime.upstreamOrNull();
		AffinityState affinity = runtime.feature(AffinityState.class);
		boolean followed = affinity.signer() != null;
		for (int i = 0; i < snapshot.size(); i++) {
			String address = snapshot.endpoint(i).address();
			endpoints.add(new EndpointReport(address, snapshot.endpoint(i).weight(), snapshot.effectiveWeight(i),
					snapshot.state(i).inFlight(), snapshot.state(i).picks(),
					snapshot.state(i).latencyNanos(now, balancer.ewmaDecayNanos()) / 1_000_000.0,
					state(snapshot, i, now),
					(upstream != null) ? upstream.addresses().resolvedAddresses(address) : null,
					(upstream != null) ? upstream.addresses().connections(address) : Map.of(),
					successRate(snapshot.state(i).lastSuccessRate()), concurrencyLimit(snapshot.state(i)),
					followed ? affinity.followedLastMinute(snapshot.state(i)) : null, snapshot.endpoint(i).zone(),
					(snapshot.priority(i) >= 0) ? snapshot.priority(i) : null));
		}
		PoolReport pool;
		if (upstream != null) {
			Upstream.PoolCounts counts = upstream.counts();
			pool = new PoolReport(counts.maxConnections(), counts.maxPending(), counts.active(), counts.idle(),
					counts.pending());
		}
		else {
			pool = new PoolReport(runtime.settings().upstream().maxConnections(),
					runtime.settings().upstream().maxPending(), 0, 0, 0);
		}
		return new ServiceReport(name(balancer.algorithm()), balancer.slowStartNanos() / 1_000_000,
				runtime.settings().hashKey().toString(), balancer.hashBalanceFactor(), runtime.isBalancedHere(),
				endpoints, pool, runtime.feature(HedgeState.class).report(),
				runtime.feature(OverloadState.class).report(), affinity.report(snapshot),
				runtime.feature(LocalityState.class).report(snapshot), runtime.feature(MirrorState.class).report(),
				runtime.feature(LoadReportsState.class).report(snapshot, runtime.nanoTime()));
	}

	private static @Nullable Integer concurrencyLimit(EndpointState state) {
		int limit = state.concurrencyLimit();
		return (limit == EndpointState.UNLIMITED) ? null : limit;
	}

	private static String state(Snapshot<Member> snapshot, int index, long now) {
		if (snapshot.isDraining(index)) {
			return "draining";
		}
		if (snapshot.state(index).isEjected(now)) {
			return "ejected";
		}
		return snapshot.state(index).isHealthy() ? "healthy" : "unhealthy";
	}

	/**
	 * Returns whether the reader signed in: a principal that is not Spring Security's
	 * anonymous token (told by name: Spring Security need not be on the classpath).
	 */
	static boolean isAuthenticated(SecurityContext reader) {
		Object principal = reader.getPrincipal();
		if (principal == null) {
			return false;
		}
		for (Class<?> type = principal.getClass(); type != null; type = type.getSuperclass()) {
			if (ANONYMOUS_TOKEN.equals(type.getName())) {
				return false;
			}
		}
		return true;
	}

	private SplitReport split(SplitSettings settings, boolean authenticated) {
		Split split = settings.split();
		RolloutTrack track = this.rollouts.track(split.name(), settings.rollout());
		Split layout = settings.layout((track != null) ? track.layout() : 0);
		Map<String, Long> counts = this.splitCounters.counts(split.name());
		List<TargetReport> targets = new ArrayList<>();
		for (int i = 0; i < split.targets().size(); i++) {
			Split.Target target = split.targets().get(i);
			targets.add(new TargetReport(target.service(), target.weight(), Math.round(layout.share(i) * 1000) / 10.0,
					counts.getOrDefault(target.service(), 0L)));
		}
		String header = settings.overrideHeader();
		return new SplitReport(targets, (settings.sticky() != null) ? settings.sticky().name() : null, header != null,
				authenticated ? header : null, settings.overrideTrustedClients().size(),
				(track != null) ? rollout(track) : null);
	}

	private RolloutReport rollout(RolloutTrack track) {
		RolloutPlan plan = track.plan();
		Rollout.Status status = track.status();
		Long judgeIn = (status.state() == Rollout.State.PROGRESSING)
				? Math.max(0, (status.judgeAtNanos() - this.runtimes.nanoTime()) / 1_000_000) : null;
		RolloutTrack.Windows current = track.current();
		List<VerdictReport> verdicts = track.verdicts()
			.stream()
			.map((verdict) -> new VerdictReport(verdict.atMillis(), verdict.step(), verdict.percent(),
					verdict.kind().label(), verdict.reason(), window(verdict.canary()), window(verdict.others())))
			.toList();
		return new RolloutReport(plan.target(), status.state().label(), plan.steps(), status.step(), status.percent(),
				plan.intervalNanos() / 1_000_000, judgeIn, status.reason(), window(current.canary()),
				window(current.others()), verdicts, plan.id(), track.awaitsPeers(),
				(status.state() == Rollout.State.SHADOWING) ? shadow(track.shadowCompared(), plan) : null);
	}

	private static ShadowReport shadow(Rollout.Window compared, RolloutPlan plan) {
		return new ShadowReport(compared.requests(), compared.errors(), plan.minRequests(), plan.maxMismatchRate());
	}

	private static @Nullable WindowReport window(Rollout.@Nullable Window window) {
		return (window != null) ? new WindowReport(window.requests(), window.errors(), window.p99Nanos() / 1_000_000.0,
				window.clients()) : null;
	}

	private static String name(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
