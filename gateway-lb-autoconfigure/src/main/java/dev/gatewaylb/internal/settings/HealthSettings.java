package dev.gatewaylb.internal.settings;

import java.time.Duration;

import dev.gatewaylb.internal.health.OutlierDetection;

/**
 * A service's health checking.
 *
 * @param passive passive outlier detection
 * @param active active health checks
 * @param maxDrainPercent the most of the service's endpoints that may drain at once
 */
public record HealthSettings(OutlierDetection passive, Active active, int maxDrainPercent) {

	/**
	 * Returns whether draining one more endpoint stays within {@code max-drain-percent}.
	 * @param draining endpoints draining now
	 * @param endpoints endpoints of the service
	 * @return whether {@code draining + 1} of {@code endpoints} is at most the percent
	 */
	public boolean allowsDrain(int draining, int endpoints) {
		return (long) (draining + 1) * 100 <= (long) this.maxDrainPercent * endpoints;
	}

	/**
	 * Active health checks.
	 *
	 * @param enabled whether endpoints are checked
	 * @param path the path requested
	 * @param interval the time between two checks
	 * @param timeout the longest wait for an answer
	 */
	public record Active(boolean enabled, String path, Duration interval, Duration timeout) {
	}

}
