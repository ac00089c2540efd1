package dev.gatewaylb.config;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Health checking of a service's endpoints; a key that is not set is {@code null}.
 *
 * @param passive Passive outlier detection from the traffic itself.
 * @param active Active health checks: a request to each endpoint at an interval.
 * @param maxDrainPercent Most of a service's endpoints that may drain at once, 0 to 100:
 * a drain beyond it, through the actuator or followed from the fleet, is refused unless
 * the actuator's call says force. Keeps a slip, or a forged fleet event, from draining a
 * whole service.
 */
public record HealthProperties(@NestedConfigurationProperty @Nullable Passive passive,
		@NestedConfigurationProperty @Nullable Active active, @Nullable Integer maxDrainPercent) {

	/**
	 * The most failures in a row an ejection may wait for: a million. A count that high
	 * keeps counting without ever ejecting, which some set rather than 0 (off); it stays
	 * far below the overflow of the int counter.
	 */
	static final int MAX_CONSECUTIVE_FAILURES = 1_000_000;

	/**
	 * The most endpoints a rule may ask for (minimum-hosts): 10000, more than one
	 * service's balancer is built for.
	 */
	static final int MAX_MINIMUM_HOSTS = 10_000;

	/**
	 * The most requests an endpoint may be asked to have in one interval before it is
	 * judged (request-volume): a billion, more than an endpoint answers in a day at
	 * 10,000 a second.
	 */
	static final int MAX_REQUEST_VOLUME = 1_000_000_000;

	public HealthProperties {
		if (maxDrainPercent != null && (maxDrainPercent < 0 || maxDrainPercent > 100)) {
			throw new IllegalArgumentException("max-drain-percent: " + maxDrainPercent + " (expected: 0 to 100)");
		}
	}

	/**
	 * Passive outlier detection.
	 *
	 * @param consecutiveFailures Failures in a row (connect errors, timeouts, bodies that
	 * break off, 5xx responses) that eject an endpoint. 0 turns passive detection off.
	 * @param baseEjectionTime Length of a first ejection; the n-th lasts n times as long
	 * (at most 10 times).
	 * @param maxEjectionPercent Most of a service's endpoints that may be ejected at
	 * once; one endpoint may always be.
	 * @param onStatuses Upstream statuses that count as an endpoint's failure, from 500
	 * to 599; empty counts every 5xx. [502, 503, 504] counts only gateway failures, so
	 * that requests an application answers with 500 do not eject it. Connect errors,
	 * resets, timeouts and bodies that break off always count.
	 * @param latencyFactor Ejects an endpoint whose median latency is more than this many
	 * times the median of its service's endpoints' median latencies (with at least 3
	 * endpoints of 20 samples each; requests that followed an affinity cookie are no
	 * samples), like a failing one. 0 turns it off; otherwise above 1.
	 * @param successRate Ejects an endpoint whose success rate is an outlier among its
	 * service's endpoints.
	 * @param failurePercentage Ejects an endpoint whose failure percentage passes a
	 * threshold.
	 */
	public record Passive(@Nullable Integer consecutiveFailures, @Nullable Duration baseEjectionTime,
			@Nullable Integer maxEjectionPercent, @Nullable List<Integer> onStatuses, @Nullable Double latencyFactor,
			@NestedConfigurationProperty @Nullable SuccessRate successRate,
			@NestedConfigurationProperty @Nullable FailurePercentage failurePercentage) {

		public Passive {
			Bounds.checkRange("consecutive-failures", consecutiveFailures, 0, MAX_CONSECUTIVE_FAILURES);
			Bounds.checkPositiveDuration("base-ejection-time", baseEjectionTime, Bounds.MAX_PERIOD);
			if (maxEjectionPercent != null && (maxEjectionPercent < 0 || maxEjectionPercent > 100)) {
				throw new IllegalArgumentException(
						"max-ejection-percent: " + maxEjectionPercent + " (expected: 0 to 100)");
			}
			if (latencyFactor != null
					&& !(latencyFactor == 0 || (latencyFactor > 1 && latencyFactor <= Bounds.MAX_FACTOR))) {
				// NaN fails both tests; a factor of 1 or less would eject half the set.
				throw new IllegalArgumentException("latency-factor: " + latencyFactor
						+ " (expected: 0 (off) or > 1, at most " + Bounds.MAX_FACTOR + ", e.g. 3)");
			}
			if (onStatuses != null) {
				for (Integer status : onStatuses) {
					// A 4xx is the client's doing: counting it would let clients eject
					// healthy endpoints.
					if (status == null || status < 500 || status > 599) {
						throw new IllegalArgumentException("on-statuses: " + status + " (expected: a 5xx status)");
					}
				}
				onStatuses = List.copyOf(onStatuses);
			}
		}

	}

	/**
	 * Success-rate ejection ({@code health.passive.success-rate}), Envoy's names and
	 * defaults; a key that is not set is {@code null}.
	 *
	 * @param enabled Whether endpoints are ejected for a success rate below the others'.
	 * Off by default.
	 * @param stdevFactor An endpoint whose success rate is more than this many standard
	 * deviations (population, over the endpoints with request-volume) below the mean is
	 * an outlier.
	 * @param minimumHosts Endpoints with request-volume in an interval the rule needs.
	 * @param requestVolume Requests an endpoint needs in an interval to be judged.
	 * @param interval How often the interval's counts are judged, and then started again;
	 * also the interval of failure-percentage ejection.
	 * @param confidence An outlier is ejected only when a one-sided binomial test says,
	 * with this confidence, that it fails more often than the service's endpoints pooled;
	 * 0 skips the test (Envoy's rule alone).
	 */
	public record SuccessRate(@Nullable Boolean enabled, @Nullable Double stdevFactor, @Nullable Integer minimumHosts,
			@Nullable Integer requestVolume, @Nullable Duration interval, @Nullable Double confidence) {

		public SuccessRate {
			// NaN fails both comparisons.
			if (stdevFactor != null && !(stdevFactor > 0 && stdevFactor <= Bounds.MAX_FACTOR)) {
				throw new IllegalArgumentException("stdev-factor: " + stdevFactor + " (expected: > 0, at most "
						+ Bounds.MAX_FACTOR + ", e.g. 1.9)");
			}
			Bounds.checkRange("minimum-hosts", minimumHosts, 1, MAX_MINIMUM_HOSTS);
			Bounds.checkRange("request-volume", requestVolume, 1, MAX_REQUEST_VOLUME);
			Bounds.checkPositiveDuration("interval", interval, Bounds.MAX_PERIOD);
			if (confidence != null && !(confidence >= 0 && confidence < 1)) {
				throw new IllegalArgumentException(
						"confidence: " + confidence + " (expected: 0 (no test) to below 1, e.g. 0.999)");
			}
		}

	}

	/**
	 * Failure-percentage ejection ({@code health.passive.failure-percentage}), Envoy's
	 * names and defaults; a key that is not set is {@code null}. Judged every
	 * {@code success-rate.interval}.
	 *
	 * @param enabled Whether endpoints are ejected for a failure percentage at or over
	 * the threshold. Off by default.
	 * @param threshold Failure percentage of an interval's requests that ejects.
	 * @param minimumHosts Endpoints with request-volume in an interval the rule needs.
	 * @param requestVolume Requests an endpoint needs in an interval to be judged.
	 */
	public record FailurePercentage(@Nullable Boolean enabled, @Nullable Integer threshold,
			@Nullable Integer minimumHosts, @Nullable Integer requestVolume) {

		public FailurePercentage {
			if (threshold != null && (threshold < 0 || threshold > 100)) {
				throw new IllegalArgumentException("threshold: " + threshold + " (expected: 0 to 100)");
			}
			Bounds.checkRange("minimum-hosts", minimumHosts, 1, MAX_MINIMUM_HOSTS);
			Bounds.checkRange("request-volume", requestVolume, 1, MAX_REQUEST_VOLUME);
		}

	}

	/**
	 * Active health checks.
	 *
	 * @param enabled Whether to check every endpoint with an HTTP GET.
	 * @param path Path requested on each endpoint; healthy on a 2xx answer.
	 * @param interval Time between two checks of an endpoint.
	 * @param timeout Longest wait for a check's answer.
	 */
	public record Active(@Nullable Boolean enabled, @Nullable String path, @Nullable Duration interval,
			@Nullable Duration timeout) {

		public Active {
			if (path != null && !path.startsWith("/")) {
				throw new IllegalArgumentException("path: '" + path + "' (expected: a path starting with /)");
			}
			Bounds.checkPositiveDuration("interval", interval, Bounds.MAX_PERIOD);
			Bounds.checkPositiveDuration("timeout", timeout, Bounds.MAX_PERIOD);
		}

	}

}
