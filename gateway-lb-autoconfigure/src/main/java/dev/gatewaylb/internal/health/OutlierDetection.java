package dev.gatewaylb.internal.health;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;

/**
 * Passive outlier detection, after Envoy's consecutive-errors detector: an endpoint that
 * fails {@code consecutiveFailures} times in a row is ejected for
 * {@code baseEjectionTime x n}, where n counts its ejections (capped at
 * {@value #MAX_EJECTION_MULTIPLIER}), unless that would put more than
 * {@code maxEjectionPercent} of the set out at once. At least one endpoint may always be
 * ejected, as in Envoy. Returning endpoints ramp under slow start; an endpoint that has
 * served well for a base ejection time after its return starts its count afresh.
 * <p>
 * A failure is what the caller says it is; the gateway reports connect errors, timeouts,
 * bodies that break off, and the statuses of {@code failureStatuses} (every 5xx by
 * default). An answer with any other status is a success and ends the streak, as a
 * non-gateway 5xx resets Envoy's consecutive gateway failure count. Thread-safe: the
 * failure streak is an atomic counter, and the limit check and the ejection are one
 * atomic step of the service's {@link Ejections}.
 *
 * @see <a href=
 * "https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/outlier">Envoy
 * outlier detection</a>
 * @param consecutiveFailures failures in a row that eject; 0 turns detection off
 * @param baseEjectionNanos the first ejection's length
 * @param maxEjectionPercent the most of the set that may be ejected at once
 * @param failureStatuses the upstream statuses that count as a failure
 * @param latencyFactor how many times the median of the service's endpoints' median
 * latencies makes an endpoint's median latency an outlier ({@link LatencyOutliers}); 0
 * turns latency-based ejection off
 * @param successRate success-rate ejection ({@link SuccessRateOutliers})
 * @param failurePercentage failure-percentage ejection ({@link SuccessRateOutliers})
 */
public record OutlierDetection(int consecutiveFailures, long baseEjectionNanos, int maxEjectionPercent,
		FailureStatuses failureStatuses, double latencyFactor, SuccessRate successRate,
		FailurePercentage failurePercentage) {

	/**
	 * Creates a detector without success-rate or failure-percentage ejection.
	 * @param consecutiveFailures failures in a row that eject; 0 turns detection off
	 * @param baseEjectionNanos the first ejection's length
	 * @param maxEjectionPercent the most of the set that may be ejected at once
	 * @param failureStatuses the upstream statuses that count as a failure
	 * @param latencyFactor the latency outlier factor, 0 for none
	 */
	public OutlierDetection(int consecutiveFailures, long baseEjectionNanos, int maxEjectionPercent,
			FailureStatuses failureStatuses, double latencyFactor) {
		this(consecutiveFailures, baseEjectionNanos, maxEjectionPercent, failureStatuses, latencyFactor,
				SuccessRate.OFF, FailurePercentage.OFF);
	}

	/**
	 * Returns whether the request path counts each endpoint's answers and failures for
	 * the interval judgements: only when one of them is on, so that a service without
	 * them pays nothing.
	 * @return whether answers are counted
	 */
	public boolean countsAnswers() {
		return this.successRate.enabled() || this.failurePercentage.enabled();
	}

	/**
	 * The ejection time multiplier stops growing here.
	 */
	public static final int MAX_EJECTION_MULTIPLIER = 10;

	/**
	 * Creates a detector that counts every 5xx status as a failure.
	 * @param consecutiveFailures failures in a row that eject; 0 turns detection off
	 * @param baseEjectionNanos the first ejection's length
	 * @param maxEjectionPercent the most of the set that may be ejected at once
	 */
	public OutlierDetection(int consecutiveFailures, long baseEjectionNanos, int maxEjectionPercent) {
		this(consecutiveFailures, baseEjectionNanos, maxEjectionPercent, FailureStatuses.SERVER_ERRORS);
	}

	/**
	 * Creates a detector without latency-based ejection.
	 * @param consecutiveFailures failures in a row that eject; 0 turns detection off
	 * @param baseEjectionNanos the first ejection's length
	 * @param maxEjectionPercent the most of the set that may be ejected at once
	 * @param failureStatuses the upstream statuses that count as a failure
	 */
	public OutlierDetection(int consecutiveFailures, long baseEjectionNanos, int maxEjectionPercent,
			FailureStatuses failureStatuses) {
		this(consecutiveFailures, baseEjectionNanos, maxEjectionPercent, failureStatuses, 0);
	}

	/**
	 * Returns whether latency-based ejection is on.
	 * @return whether {@code latency-factor} is above 0
	 */
	public boolean ejectsSlowEndpoints() {
		return this.latencyFactor > 0;
	}

	/**
	 * Returns whether detection is on.
	 * @return whether failures can eject
	 */
	public boolean isEnabled() {
		return this.consecutiveFailures > 0;
	}

	/**
	 * Returns whether an answer with {@code status} counts as its endpoint's failure.
	 * Reads two words: cheap enough for every response.
	 * @param status the upstream's status
	 * @return whether a failure
	 */
	public boolean countsAsFailure(int status) {
		return this.failureStatuses.contains(status);
	}

	/**
	 * Records a success of an endpoint.
	 * @param endpoint the endpoint's state
	 * @param nowNanos the balancer clock's current time
	 */
	public void succeeded(EndpointState endpoint, long nowNanos) {
		endpoint.recordSuccess(nowNanos, this.baseEjectionNanos);
	}

	/**
	 * Records a failure of an endpoint and ejects it when its streak reaches the
	 * threshold and the set can spare it. The caller rebuilds the balancer when this
	 * returns true.
	 * @param endpoint the endpoint's state
	 * @param snapshot the set it belongs to
	 * @param ejections the ejections of that set
	 * @param nowNanos the balancer clock's current time
	 * @return whether this failure ejected the endpoint
	 */
	public boolean failed(EndpointState endpoint, Snapshot<?> snapshot, Ejections ejections, long nowNanos) {
		if (!isEnabled() || endpoint.recordFailure() < this.consecutiveFailures || endpoint.isEjected(nowNanos)) {
			return false;
		}
		return eject(endpoint, snapshot, ejections, nowNanos);
	}

	/**
	 * Ejects an endpoint for the base ejection time times its ejection count (capped at
	 * {@value #MAX_EJECTION_MULTIPLIER}), if the set can spare it: the one path that
	 * failure streaks and latency outliers share.
	 * @param endpoint the endpoint's state
	 * @param snapshot the set it belongs to
	 * @param ejections the ejections of that set
	 * @param nowNanos the balancer clock's current time
	 * @return whether this call ejected the endpoint
	 */
	public boolean eject(EndpointState endpoint, Snapshot<?> snapshot, Ejections ejections, long nowNanos) {
		long multiplier = Math.min(endpoint.timesEjected() + 1, MAX_EJECTION_MULTIPLIER);
		return ejections.eject(endpoint, snapshot.size(), this.maxEjectionPercent, nowNanos,
				nowNanos + this.baseEjectionNanos * multiplier);
	}

	/**
	 * Success-rate ejection, judged every interval over its counts.
	 *
	 * @param enabled whether it runs
	 * @param stdevFactor standard deviations below the mean that make an outlier
	 * @param minimumHosts endpoints with the volume the rule needs
	 * @param requestVolume requests an endpoint needs to be judged
	 * @param intervalNanos how often the counts are judged; failure-percentage ejection's
	 * interval too
	 * @param confidence the binomial test's confidence, 0 for none
	 */
	public record SuccessRate(boolean enabled, double stdevFactor, int minimumHosts, long requestVolume,
			long intervalNanos, double confidence) {

		/**
		 * Off, with Envoy's defaults.
		 */
		public static final SuccessRate OFF = new SuccessRate(false, 1.9, 5, 100, 10_000_000_000L, 0.999);

	}

	/**
	 * Failure-percentage ejection, judged every success-rate interval.
	 *
	 * @param enabled whether it runs
	 * @param thresholdPercent the failure percentage that ejects
	 * @param minimumHosts endpoints with the volume the rule needs
	 * @param requestVolume requests an endpoint needs to be judged
	 */
	public record FailurePercentage(boolean enabled, int thresholdPercent, int minimumHosts, long requestVolume) {

		/**
		 * Off, with Envoy's defaults.
		 */
		public static final FailurePercentage OFF = new FailurePercentage(false, 85, 5, 50);

	}

}
