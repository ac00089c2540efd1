package dev.gatewaylb.gateway.settings;

/**
 * A service's hedged (backup) requests.
 *
 * @param maxExtraLoad backups as a fraction of requests, 0 to 1; 0 is off
 * @param minDelayNanos the shortest wait before a backup
 */
public record HedgeSettings(double maxExtraLoad, long minDelayNanos) {

	/**
	 * Returns whether the service hedges.
	 * @return whether {@code max-extra-load} is above 0
	 */
	public boolean enabled() {
		return this.maxExtraLoad > 0;
	}

}
