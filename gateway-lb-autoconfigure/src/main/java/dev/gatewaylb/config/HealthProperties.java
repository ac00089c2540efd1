package dev.gatewaylb.config;

import java.time.Duration;

import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Health checking of a service's endpoints.
 *
 * @param passive Passive outlier detection from the traffic itself.
 * @param active Active health checks: a request to each endpoint at an interval.
 */
public record HealthProperties(@DefaultValue @NestedConfigurationProperty Passive passive,
		@DefaultValue @NestedConfigurationProperty Active active) {

	/**
	 * Passive outlier detection.
	 *
	 * @param consecutiveFailures Failures in a row (connect errors, timeouts, bodies that
	 * break off, 5xx responses) that eject an endpoint. 0 turns passive detection off.
	 * @param baseEjectionTime Length of a first ejection; the n-th lasts n times as long
	 * (at most 10 times).
	 * @param maxEjectionPercent Most of a service's endpoints that may be ejected at
	 * once; one endpoint may always be.
	 */
	public record Passive(@DefaultValue("5") int consecutiveFailures, @DefaultValue("30s") Duration baseEjectionTime,
			@DefaultValue("50") int maxEjectionPercent) {

		public Passive {
			if (consecutiveFailures < 0) {
				throw new IllegalArgumentException(
						"consecutive-failures: " + consecutiveFailures + " (expected: >= 0)");
			}
			if (baseEjectionTime.isNegative() || baseEjectionTime.isZero()) {
				throw new IllegalArgumentException(
						"base-ejection-time: " + Durations.format(baseEjectionTime) + " (expected: > 0s)");
			}
			if (maxEjectionPercent < 0 || maxEjectionPercent > 100) {
				throw new IllegalArgumentException(
						"max-ejection-percent: " + maxEjectionPercent + " (expected: 0 to 100)");
			}
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
	public record Active(@DefaultValue("false") boolean enabled, @DefaultValue("/actuator/health") String path,
			@DefaultValue("10s") Duration interval, @DefaultValue("2s") Duration timeout) {

		public Active {
			if (!path.startsWith("/")) {
				throw new IllegalArgumentException("path: '" + path + "' (expected: a path starting with /)");
			}
			if (interval.isNegative() || interval.isZero()) {
				throw new IllegalArgumentException("interval: " + Durations.format(interval) + " (expected: > 0s)");
			}
			if (timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("timeout: " + Durations.format(timeout) + " (expected: > 0s)");
			}
		}

	}

}
