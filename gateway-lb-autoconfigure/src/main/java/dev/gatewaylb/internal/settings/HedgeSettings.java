package dev.gatewaylb.internal.settings;

import java.util.Set;

/**
 * A service's hedged (backup) requests.
 *
 * @param maxExtraLoad backups as a fraction of requests, 0 to 1; 0 is off
 * @param minDelayNanos the shortest wait before a backup
 * @param methods the methods hedged, upper case
 */
public record HedgeSettings(double maxExtraLoad, long minDelayNanos, Set<String> methods) {

	public HedgeSettings {
		methods = Set.copyOf(methods);
	}

	/**
	 * Returns whether requests of a method are hedged.
	 * @param method the method's name, as the request gives it
	 * @return whether hedged
	 */
	public boolean hedges(String method) {
		return this.methods.contains(method);
	}

	/**
	 * Returns whether the service hedges.
	 * @return whether {@code max-extra-load} is above 0
	 */
	public boolean enabled() {
		return this.maxExtraLoad > 0;
	}

}
