package dev.gatewaylb.config;

import org.jspecify.annotations.Nullable;

/**
 * Zone-aware balancing: priority levels by zone, failover by health, spill by load, and
 * panic; a key that is not set is {@code null}.
 *
 * @param enabled Whether endpoints form priority levels: level 0 in the gateway's zone
 * (spring.cloud.loadbalancer.zone), level 1 in every other zone and without one, or the
 * level an instance's metadata priority gives. Requires the gateway's zone.
 * @param overprovisioningFactor How far a level's healthy endpoints may be loaded past
 * their share before traffic spills to the next level: a level takes min(100%, healthy
 * fraction x this factor) of the traffic left to it. Above 1.
 * @param panicThreshold Healthy fraction of the service's endpoints below which health is
 * ignored and requests spread over every endpoint of every level, from 0 to 1. 0 never
 * panics.
 * @param loadAware Whether traffic also spills from a level whose answers are slower than
 * the next level's, by the latency both levels show.
 */
public record LocalityProperties(@Nullable Boolean enabled, @Nullable Double overprovisioningFactor,
		@Nullable Double panicThreshold, @Nullable Boolean loadAware) {

	public LocalityProperties {
		// NaN fails both comparisons.
		if (overprovisioningFactor != null
				&& !(overprovisioningFactor > 1 && overprovisioningFactor <= Bounds.MAX_FACTOR)) {
			throw new IllegalArgumentException("overprovisioning-factor: " + overprovisioningFactor
					+ " (expected: > 1, at most " + Bounds.MAX_FACTOR + ", e.g. 1.4)");
		}
		if (panicThreshold != null && !(panicThreshold >= 0 && panicThreshold <= 1)) {
			throw new IllegalArgumentException("panic-threshold: " + panicThreshold + " (expected: 0 (never) to 1)");
		}
	}

}
