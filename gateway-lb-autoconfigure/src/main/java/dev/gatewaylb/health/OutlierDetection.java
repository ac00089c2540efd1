package dev.gatewaylb.health;

import dev.gatewaylb.balance.EndpointState;
import dev.gatewaylb.balance.Snapshot;

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
 * bodies that break off, and 5xx responses. Thread-safe: the failure streak is an atomic
 * counter, and an endpoint is ejected at most once at a time.
 *
 * @see <a href=
 * "https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/outlier">Envoy
 * outlier detection</a>
 * @param consecutiveFailures failures in a row that eject; 0 turns detection off
 * @param baseEjectionNanos the first ejection's length
 * @param maxEjectionPercent the most of the set that may be ejected at once
 */
public record OutlierDetection(int consecutiveFailures, long baseEjectionNanos, int maxEjectionPercent) {

	/**
	 * The ejection time multiplier stops growing here.
	 */
	public static final int MAX_EJECTION_MULTIPLIER = 10;

	/**
	 * Returns whether detection is on.
	 * @return whether failures can eject
	 */
	public boolean isEnabled() {
		return this.consecutiveFailures > 0;
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
	 * @param nowNanos the balancer clock's current time
	 * @return whether this failure ejected the endpoint
	 */
	public boolean failed(EndpointState endpoint, Snapshot<?> snapshot, long nowNanos) {
		if (!isEnabled() || endpoint.recordFailure() < this.consecutiveFailures || endpoint.isEjected(nowNanos)) {
			return false;
		}
		if (!canEject(snapshot, nowNanos)) {
			return false;
		}
		long multiplier = Math.min(endpoint.timesEjected() + 1, MAX_EJECTION_MULTIPLIER);
		return endpoint.eject(nowNanos, nowNanos + this.baseEjectionNanos * multiplier);
	}

	/**
	 * Returns whether one more ejection keeps the ejected share within the limit.
	 */
	boolean canEject(Snapshot<?> snapshot, long nowNanos) {
		int size = snapshot.size();
		int ejected = 0;
		for (int i = 0; i < size; i++) {
			if (snapshot.state(i).isEjected(nowNanos)) {
				ejected++;
			}
		}
		// As Envoy: at least one may go, whatever the percentage.
		return ejected == 0 || (ejected + 1) * 100L <= (long) size * this.maxEjectionPercent;
	}

}
