package dev.gatewaylb.internal.balance;

import org.jspecify.annotations.Nullable;

/**
 * How a service's endpoints are grouped into priority levels by where they run, and how
 * traffic is shared between the levels.
 * <p>
 * An endpoint's level is its {@link Endpoint#priority() priority} when discovery gives
 * one, else 0 in the gateway's {@code zone} and 1 anywhere else (an endpoint without a
 * zone included). A level of the healthy fraction {@code h} takes
 * {@code min(1, h x overprovisioningFactor)} of the traffic left to it, and the rest
 * spills to the next level; when the levels together fall short of all the traffic, their
 * shares are scaled up to sum to it (Envoy's priority load). When the service's healthy
 * fraction falls below {@code panicThreshold}, health is ignored and every endpoint of
 * every level takes traffic.
 *
 * @param enabled whether endpoints form levels; off, a service is one pool
 * @param zone the gateway's zone, or {@code null} (then every endpoint without a priority
 * is in level 1)
 * @param overprovisioningFactor {@code > 1}: how far a level's healthy endpoints may be
 * loaded past their share before traffic spills
 * @param panicThreshold 0 to 1: the healthy fraction of the service below which health is
 * ignored; 0 never panics
 * @param loadAware whether traffic also spills from a level whose answers are slower than
 * the next level's
 * @see <a href=
 * "https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/load_balancing/priority">Envoy,
 * priority levels</a>
 */
public record LevelSettings(boolean enabled, @Nullable String zone, double overprovisioningFactor,
		double panicThreshold, boolean loadAware) {

	/**
	 * Off: one pool.
	 */
	public static final LevelSettings NONE = new LevelSettings(false, null, 1.4, 0.5, true);

	/**
	 * The level of an endpoint with no priority outside the gateway's zone.
	 */
	public static final int OTHER_ZONES = 1;

	public LevelSettings {
		// NaN fails both comparisons.
		if (!(overprovisioningFactor > 1 && Double.isFinite(overprovisioningFactor))) {
			throw new IllegalArgumentException(
					"overprovisioning-factor: " + overprovisioningFactor + " (expected: > 1, e.g. 1.4)");
		}
		if (!(panicThreshold >= 0 && panicThreshold <= 1)) {
			throw new IllegalArgumentException("panic-threshold: " + panicThreshold + " (expected: 0 (never) to 1)");
		}
	}

	/**
	 * Returns the priority level of an endpoint: the priority it was given, else 0 in the
	 * gateway's zone and {@link #OTHER_ZONES} elsewhere.
	 * @param endpoint the endpoint
	 * @return the level's priority, {@code >= 0}
	 */
	public int priorityOf(Endpoint endpoint) {
		if (endpoint.priority() != Endpoint.NO_PRIORITY) {
			return endpoint.priority();
		}
		return (this.zone != null && this.zone.equals(endpoint.zone())) ? 0 : OTHER_ZONES;
	}

}
