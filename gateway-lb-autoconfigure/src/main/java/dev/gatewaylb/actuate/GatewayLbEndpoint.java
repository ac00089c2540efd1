package dev.gatewaylb.actuate;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import dev.gatewaylb.balance.BalancerSettings;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.runtime.ServiceCounters;
import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.runtime.ServiceRuntimes;
import dev.gatewaylb.gateway.runtime.SplitCounters;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.SplitSettings;
import dev.gatewaylb.gateway.upstream.Upstream;
import dev.gatewaylb.hedge.HedgeDelay;
import dev.gatewaylb.hedge.Hedging;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.rollout.Rollout;
import dev.gatewaylb.rollout.RolloutAction;
import dev.gatewaylb.rollout.RolloutTrack;
import dev.gatewaylb.rollout.SplitRollouts;
import dev.gatewaylb.split.Split;
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
 * drawn as a live dashboard ({@link GatewayLbDashboard}).
 * <p>
 * Durations are in milliseconds, with the unit in the field name. Every service
 * gateway-lb tracks appears from start-up: those routes name, those configured under
 * {@code gateway.lb.services}, split targets, and any other once a request named it; its
 * endpoints appear as soon as discovery listed them.
 * <p>
 * Read-only unless {@code management.endpoint.gatewaylb.access} is {@code unrestricted}:
 * draining answers 503 to everyone and a rollout action moves users between versions, so
 * either must be a deliberate choice. A split's override header is named only to an
 * authenticated reader: knowing it lets nobody move (only
 * {@code override-trusted-clients} do), but it is one fewer thing for an anonymous reader
 * to probe.
 */
@Endpoint(id = "gatewaylb", defaultAccess = Access.READ_ONLY)
public class GatewayLbEndpoint {

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
	 * @param reader who reads: split override headers are named to authenticated readers
	 * only
	 * @return the report
	 */
	@ReadOperation
	public GatewayLbReport report(SecurityContext reader) {
		boolean authenticated = reader.getPrincipal() != null;
		Map<String, ServiceReport> services = new TreeMap<>();
		this.runtimes.all().forEach((runtime) -> services.put(runtime.id(), service(runtime)));
		Map<String, SplitReport> splits = new TreeMap<>();
		this.settings.get()
			.splits()
			.values()
			.forEach((split) -> splits.put(split.split().name(), split(split, authenticated)));
		return new GatewayLbReport(this.settings.generation(), this.settings.lastError(),
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
	 * @param rollout the rollout action
	 * @return the endpoint's state or the rollout's report; 404 when there is no such
	 * endpoint or rollout, 400 when the request names neither action
	 */
	@WriteOperation
	public WebEndpointResponse<?> act(@Selector String name, @Nullable String endpoint, @Nullable Boolean drain,
			@Nullable String rollout) {
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
		if (!this.runtimes.drain(name, endpoint, drain)) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		this.fleet.get().drain(name, endpoint, drain);
		return new WebEndpointResponse<>(new DrainResult(name, endpoint, drain ? "draining" : "healthy"));
	}

	private ServiceReport service(ServiceRuntime runtime) {
		Snapshot<Member> snapshot = runtime.snapshot();
		BalancerSettings balancer = snapshot.settings();
		List<EndpointReport> endpoints = new ArrayList<>();
		long now = this.runtimes.nanoTime();
		for (int i = 0; i < snapshot.size(); i++) {
			endpoints.add(new EndpointReport(snapshot.endpoint(i).address(), snapshot.endpoint(i).weight(),
					snapshot.effectiveWeight(i), snapshot.state(i).inFlight(), snapshot.state(i).picks(),
					snapshot.state(i).latencyNanos(now, balancer.ewmaDecayNanos()) / 1_000_000.0,
					state(snapshot, i, now)));
		}
		Upstream upstream = runtime.upstreamOrNull();
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
				endpoints, pool, hedge(runtime));
	}

	private static @Nullable HedgeReport hedge(ServiceRuntime runtime) {
		Hedging hedging = runtime.hedging();
		if (hedging == null) {
			return null;
		}
		long delay = hedging.delayNanos();
		ServiceCounters counters = runtime.counters();
		return new HedgeReport(hedging.delay().maxExtraLoad(), runtime.settings().hedge().minDelayNanos() / 1_000_000.0,
				(delay == HedgeDelay.UNKNOWN) ? null : delay / 1_000_000.0, hedging.delay().samplesInWindow(),
				counters.hedgesSent().sum(), counters.hedgesWon().sum(), counters.hedgesLost().sum(),
				counters.hedgesRefusedByBudget().sum());
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
		Rollout.Plan plan = track.plan();
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
				window(current.others()), verdicts);
	}

	private static @Nullable WindowReport window(Rollout.@Nullable Window window) {
		return (window != null) ? new WindowReport(window.requests(), window.errors(), window.p99Nanos() / 1_000_000.0)
				: null;
	}

	private static String name(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Everything.
	 *
	 * @param generation how many settings have been in force, 1 for those of start-up
	 * @param lastError why the last refresh was rejected, or {@code null}
	 * @param refreshes refreshes applied and rejected since start-up
	 * @param services services by id
	 * @param splits splits by name
	 */
	public record GatewayLbReport(long generation, @Nullable String lastError, RefreshReport refreshes,
			Map<String, ServiceReport> services, Map<String, SplitReport> splits) {
	}

	/**
	 * Refresh outcomes.
	 *
	 * @param applied refreshes put in force
	 * @param rejected refreshes rejected as invalid
	 */
	public record RefreshReport(long applied, long rejected) {
	}

	/**
	 * One service.
	 *
	 * @param algorithm the algorithm in force
	 * @param slowStartMillis the slow-start window
	 * @param hashKey the consistent-hash key
	 * @param hashBalanceFactor the consistent-hash bounded-load factor, 0 for off
	 * @param balanced whether gateway-lb balances the service (false when the application
	 * declares its own Spring Cloud LoadBalancer balancer for it)
	 * @param endpoints the endpoints, in canonical order (by address)
	 * @param pool the service's connection pools
	 * @param hedge the service's hedged requests, or {@code null} when it does not hedge
	 */
	public record ServiceReport(String algorithm, long slowStartMillis, String hashKey, double hashBalanceFactor,
			boolean balanced, List<EndpointReport> endpoints, PoolReport pool, @Nullable HedgeReport hedge) {
	}

	/**
	 * A service's hedged requests.
	 *
	 * @param maxExtraLoad backups as a fraction of requests
	 * @param minDelayMillis the shortest delay
	 * @param delayMillis how long an attempt waits now before its backup: the service's
	 * latency at the percentile 1 - max-extra-load over the last 10 s, at least the
	 * minimum; {@code null} while the window holds too few answers to say, when nothing
	 * is hedged
	 * @param samples answers in the latency window
	 * @param sent backups sent
	 * @param won backups whose headers came first
	 * @param lost backups cancelled or failed
	 * @param refusedByBudget backups the budget refused
	 */
	public record HedgeReport(double maxExtraLoad, double minDelayMillis, @Nullable Double delayMillis, long samples,
			long sent, long won, long lost, long refusedByBudget) {
	}

	/**
	 * A service's connection pools: limits per endpoint, counts over all endpoints.
	 *
	 * @param maxConnections the connection cap per endpoint
	 * @param maxPending the pending limit per endpoint
	 * @param active connections in use
	 * @param idle idle connections
	 * @param pending requests waiting for a connection
	 */
	public record PoolReport(int maxConnections, int maxPending, int active, int idle, int pending) {
	}

	/**
	 * One endpoint.
	 *
	 * @param address {@code host:port}
	 * @param weight its configured weight
	 * @param effectiveWeight the weight it is balanced with now (slow start, drain)
	 * @param inFlight requests picked and not yet finished
	 * @param picks requests picked since it joined
	 * @param latencyEwmaMillis its peak-EWMA latency now, 0 before the first sample
	 * @param state {@code healthy}, {@code draining}, {@code ejected} (passive health) or
	 * {@code unhealthy} (active health)
	 */
	public record EndpointReport(String address, int weight, double effectiveWeight, int inFlight, long picks,
			double latencyEwmaMillis, String state) {
	}

	/**
	 * One split.
	 *
	 * @param targets the targets in order
	 * @param stickyCookie the affinity cookie's name, or {@code null}
	 * @param override whether the split has an override header
	 * @param overrideHeader the override header, to authenticated readers only, else
	 * {@code null}
	 * @param overrideTrustedNetworks how many networks are trusted to override
	 */
	public record SplitReport(List<TargetReport> targets, @Nullable String stickyCookie, boolean override,
			@Nullable String overrideHeader, int overrideTrustedNetworks, @Nullable RolloutReport rollout) {
	}

	/**
	 * A split's rollout.
	 *
	 * @param target the target whose share ramps
	 * @param state {@code progressing}, {@code paused}, {@code promoted} or
	 * {@code rolled-back}
	 * @param steps the target's percent at each step
	 * @param step the index of the step in force (the one it was on, when rolled back)
	 * @param percent the target's share of the split's traffic now
	 * @param intervalMillis time on each step before it is judged
	 * @param judgeInMillis time until the step is judged, when progressing; else
	 * {@code null}
	 * @param reason why it was rolled back, or {@code null}
	 * @param canary what the target did on this step so far
	 * @param others what the other targets did on this step so far
	 * @param verdicts the latest decisions, oldest first
	 */
	public record RolloutReport(String target, String state, int[] steps, int step, int percent, long intervalMillis,
			@Nullable Long judgeInMillis, @Nullable String reason, @Nullable WindowReport canary,
			@Nullable WindowReport others, List<VerdictReport> verdicts) {
	}

	/**
	 * What one side of a rollout's comparison did over an interval.
	 *
	 * @param requests attempts answered or failed
	 * @param errors of them, failures as passive health counts them
	 * @param p99Millis their 99th percentile latency to the end of the response
	 */
	public record WindowReport(long requests, long errors, double p99Millis) {
	}

	/**
	 * One decision about a rollout.
	 *
	 * @param atMillis when, in milliseconds since the epoch
	 * @param step the index of the step it was on
	 * @param percent the target's share then
	 * @param verdict {@code started}, {@code hold}, {@code next}, {@code promoted},
	 * {@code rolled-back}, {@code paused} or {@code resumed}
	 * @param reason why, or {@code null}
	 * @param canary what the target did over the judged interval, or {@code null}
	 * @param others what the other targets did, or {@code null}
	 */
	public record VerdictReport(long atMillis, int step, int percent, String verdict, @Nullable String reason,
			@Nullable WindowReport canary, @Nullable WindowReport others) {
	}

	/**
	 * One target of a split.
	 *
	 * @param service the target service id
	 * @param weight its weight
	 * @param percent its share of the split's traffic now, in percent (a rollout changes
	 * it)
	 * @param picks requests the split sent to it since it was configured
	 */
	public record TargetReport(String service, int weight, double percent, long picks) {
	}

	/**
	 * The outcome of a drain request.
	 *
	 * @param service the service id
	 * @param endpoint the endpoint's {@code host:port}
	 * @param state {@code draining} or {@code healthy}
	 */
	public record DrainResult(String service, String endpoint, String state) {
	}

}
