package dev.gatewaylb.gateway.settings;

import java.time.Duration;

import dev.gatewaylb.health.OutlierDetection;

/**
 * A service's health checking.
 *
 * @param passive passive outlier detection
 * @param active active health checks
 */
public record HealthSettings(OutlierDetection passive, Active active) {

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
