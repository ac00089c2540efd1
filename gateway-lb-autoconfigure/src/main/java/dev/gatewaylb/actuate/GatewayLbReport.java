package dev.gatewaylb.actuate;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What {@code /actuator/gatewaylb} reports: every service and split, as JSON. The record
 * components are the JSON fields; the nested records are the parts of the report
 * ({@code GET /actuator/gatewaylb/{name}} answers one {@link ServiceReport} or
 * {@link SplitReport}) and the answers of its write operation ({@link DrainResult}, or a
 * {@link RolloutReport}). Durations are in milliseconds, with the unit in the field name.
 * <p>
 * Public API, as README's "API and stability" lists it.
 *
 * @param generation how many settings have been in force, 1 for those of start-up
 * @param lastError why the last refresh was rejected, or {@code null}
 * @param refreshes refreshes applied and rejected since start-up
 * @param services services by id
 * @param splits splits by name
 */
public record GatewayLbReport(long generation, @Nullable String lastError, RefreshReport refreshes,
		Map<String, ServiceReport> services, Map<String, SplitReport> splits) {

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
	 * @param concurrency the service's concurrency limits, or {@code null} when it limits
	 * nothing
	 * @param affinity the service's sticky sessions to an endpoint, or {@code null} when
	 * it has none
	 * @param locality the service's priority levels by zone, or {@code null} without
	 * localities
	 * @param mirror the service's mirroring to a shadow, or {@code null} when it does not
	 * mirror
	 */
	public record ServiceReport(String algorithm, long slowStartMillis, String hashKey, double hashBalanceFactor,
			boolean balanced, List<EndpointReport> endpoints, PoolReport pool, @Nullable HedgeReport hedge,
			@Nullable ConcurrencyReport concurrency, @Nullable AffinityReport affinity,
			@Nullable LocalityReport locality, @Nullable MirrorReport mirror, @Nullable LoadReportsReport loadReports) {
	}

	/**
	 * What a service's endpoints report of their own load, and the weights it gives them.
	 *
	 * @param utilization the fields that count as utilization, in order
	 * @param weighing whether the service's algorithm weighs by the reports (round-robin,
	 * least-requests, power-of-two-choices)
	 * @param rejected reports refused, by reason
	 * @param endpoints each endpoint's last report and weight
	 */
	public record LoadReportsReport(List<String> utilization, boolean weighing, Map<String, Long> rejected,
			List<EndpointLoadReport> endpoints) {
	}

	/**
	 * One endpoint's last load report and its weight; a field it did not report is
	 * {@code null}.
	 *
	 * @param address {@code host:port}
	 * @param utilization its utilization as the settings read it (0: none usable)
	 * @param applicationUtilization {@code application_utilization}
	 * @param cpuUtilization {@code cpu_utilization}
	 * @param memUtilization {@code mem_utilization}
	 * @param rps {@code rps_fractional}
	 * @param eps {@code eps}
	 * @param namedMetrics {@code named_metrics}
	 * @param ageMillis how long ago the report came, -1 for none yet
	 * @param weight its weight relative to the service's mean (1 the mean)
	 * @param counted whether its own report gives the weight (false: in blackout, expired
	 * or nothing usable, so it takes the mean)
	 */
	public record EndpointLoadReport(String address, @Nullable Double utilization,
			@Nullable Double applicationUtilization, @Nullable Double cpuUtilization, @Nullable Double memUtilization,
			@Nullable Double rps, @Nullable Double eps, Map<String, Double> namedMetrics, long ageMillis, double weight,
			boolean counted) {
	}

	/**
	 * A service's mirroring to its shadow.
	 *
	 * @param target the shadow service
	 * @param percent the share of requests mirrored
	 * @param compare {@code none}, {@code status} or {@code body}
	 * @param inFlight mirrored requests in flight
	 * @param match mirrored requests whose answers matched
	 * @param mismatch those whose answers differed
	 * @param error those without two answers to compare
	 * @param dropped requests not mirrored (no place, a body too large)
	 * @param mismatches the last mismatches, oldest first
	 */
	public record MirrorReport(String target, int percent, String compare, int inFlight, long match, long mismatch,
			long error, long dropped, List<MismatchReport> mismatches) {
	}

	/**
	 * One mismatch; no body, no query string.
	 *
	 * @param primaryStatus the primary's status
	 * @param shadowStatus the shadow's
	 * @param bodyDiffers whether the status classes matched and the bodies did not
	 * @param path the request's path
	 * @param atMillis when, epoch milliseconds
	 */
	public record MismatchReport(int primaryStatus, int shadowStatus, boolean bodyDiffers, String path, long atMillis) {
	}

	/**
	 * A service's priority levels.
	 *
	 * @param zone the gateway's zone
	 * @param panic whether the service's healthy fraction is below its panic threshold,
	 * so that every endpoint of every level takes traffic
	 * @param loadAware whether levels spill by load
	 * @param levels the levels in priority order
	 */
	public record LocalityReport(@Nullable String zone, boolean panic, boolean loadAware, List<LevelReport> levels) {
	}

	/**
	 * One priority level.
	 *
	 * @param priority its priority, 0 the most preferred
	 * @param endpoints its endpoints of weight above 0, draining ones included
	 * @param healthy those that take traffic
	 * @param share the share of the traffic drawn for it, from health, 0 to 1
	 * @param spilling whether it is busy enough that requests drawn for it may go to the
	 * next level ({@code load-aware})
	 * @param requests the requests sent to it
	 */
	public record LevelReport(int priority, int endpoints, int healthy, double share, boolean spilling, long requests) {
	}

	/**
	 * A service's sticky sessions to an endpoint.
	 *
	 * @param cookie the affinity cookie's name
	 * @param learn the application cookie it learns from, or {@code null}
	 * @param followed requests that followed their cookie to its endpoint
	 * @param started requests without a cookie, given one (the meter's {@code new})
	 * @param moved requests whose cookie's endpoint could not take them, or that a retry
	 * or a backup moved
	 * @param rejected requests whose cookie was not signed for this service
	 * @param drainingWithSessions draining endpoints that sessions still followed in the
	 * last minute
	 */
	public record AffinityReport(String cookie, @Nullable String learn, long followed, long started, long moved,
			long rejected, List<String> drainingWithSessions) {
	}

	/**
	 * A service's concurrency limits.
	 *
	 * @param algorithm {@code gradient2}, {@code vegas}, {@code aimd} or {@code fixed}
	 * @param initialLimit the limit of an endpoint before its first samples
	 * @param minLimit the lowest limit
	 * @param maxLimit the highest limit
	 * @param limit the service's limit now: the sum of its endpoints' limits (draining
	 * ones and those of weight 0 left out)
	 * @param shed requests answered 503 because every endpoint was at its limit
	 * @param maxWaitMillis how long a request may wait for a place
	 * ({@code concurrency.max-wait}), 0 when it is shed at once
	 * @param waiting requests waiting for a place now
	 * @param partitionBy where a request's partition name comes from, or {@code null}
	 * @param partitions the partitions with their shares and requests in flight, the rest
	 * last (named {@code null}); empty when not partitioned
	 */
	public record ConcurrencyReport(String algorithm, int initialLimit, int minLimit, int maxLimit, long limit,
			long shed, long maxWaitMillis, int waiting, @Nullable String partitionBy,
			List<PartitionReport> partitions) {
	}

	/**
	 * One partition of a service's concurrency limit.
	 *
	 * @param name its name, {@code null} for the rest (requests of no listed partition)
	 * @param share its share of the service's limit
	 * @param guaranteed the requests in flight its share guarantees at the present limit
	 * @param inFlight its requests in flight
	 * @param waiting its requests waiting for a place ({@code concurrency.max-wait})
	 */
	public record PartitionReport(@Nullable String name, double share, long guaranteed, int inFlight, int waiting) {
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
	 * @param resolvedAddresses the addresses its hostname resolved to last, or
	 * {@code null} for an IP literal or a name not resolved yet
	 * @param connections its open connections, counted by the address each is connected
	 * to
	 * @param successRate its success rate in percent over the last interval success-rate
	 * ejection judged, or {@code null} when that is off or the endpoint had fewer
	 * requests than {@code request-volume}
	 * @param concurrencyLimit the requests it may have in flight by its concurrency
	 * limiter, or {@code null} when the service limits nothing
	 * @param followedLastMinute requests that followed a session's affinity cookie to it
	 * in the last minute, or {@code null} when the service has no endpoint affinity
	 * @param zone the zone discovery says it runs in, or {@code null}
	 * @param priority the priority of its level, or {@code null} without localities
	 */
	public record EndpointReport(String address, int weight, double effectiveWeight, int inFlight, long picks,
			double latencyEwmaMillis, String state, @Nullable List<String> resolvedAddresses,
			Map<String, Integer> connections, @Nullable Double successRate, @Nullable Integer concurrencyLimit,
			@Nullable Long followedLastMinute, @Nullable String zone, @Nullable Integer priority) {
	}

	/**
	 * One split.
	 *
	 * @param targets the targets in order
	 * @param stickyCookie the sticky cookie's name, or {@code null}
	 * @param override whether the split has an override header
	 * @param overrideHeader the override header, to authenticated readers only, else
	 * {@code null}
	 * @param overrideTrustedNetworks how many networks are trusted to override
	 * @param rollout the split's rollout, or {@code null} when it has none
	 */
	public record SplitReport(List<TargetReport> targets, @Nullable String stickyCookie, boolean override,
			@Nullable String overrideHeader, int overrideTrustedNetworks, @Nullable RolloutReport rollout) {
	}

	/**
	 * A split's rollout.
	 *
	 * @param target the target whose share ramps
	 * @param state {@code shadowing}, {@code progressing}, {@code paused},
	 * {@code promoted} or {@code rolled-back}
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
	 * @param id the rollout's epoch, {@code rollout.id} or the one derived from the block
	 * @param awaitingPeers whether it waits, paused on its first step, for a peer to tell
	 * where the fleet has it (a replica that just started)
	 * @param shadow the shadow stage's mirrored answers, while {@code shadowing}, else
	 * {@code null}
	 */
	public record RolloutReport(String target, String state, int[] steps, int step, int percent, long intervalMillis,
			@Nullable Long judgeInMillis, @Nullable String reason, @Nullable WindowReport canary,
			@Nullable WindowReport others, List<VerdictReport> verdicts, String id, boolean awaitingPeers,
			@Nullable ShadowReport shadow) {
	}

	/**
	 * A rollout's shadow stage so far.
	 *
	 * @param compared mirrored answers compared with the primary's
	 * @param mismatched of them, those whose status class differed
	 * @param needed the compared answers the stage needs, {@code min-requests}
	 * @param maxMismatchRate the most that may differ
	 */
	public record ShadowReport(long compared, long mismatched, long needed, double maxMismatchRate) {
	}

	/**
	 * What one side of a rollout's comparison did over an interval.
	 *
	 * @param requests attempts answered or failed, each client counted for at most
	 * max-outcomes-per-client of them per interval
	 * @param errors of them, errors: a status of error-statuses, a connection failure or
	 * timeout, the gateway's own 503 for the side
	 * @param p99Millis their 99th percentile latency to the response headers
	 * @param clients the distinct clients they came from
	 */
	public record WindowReport(long requests, long errors, double p99Millis, long clients) {
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
	 * The answer to a drain request (a write to {@code /actuator/gatewaylb/{service}}).
	 *
	 * @param service the service id
	 * @param endpoint the endpoint's {@code host:port}
	 * @param state {@code draining} or {@code healthy}
	 */
	public record DrainResult(String service, String endpoint, String state) {
	}

}
