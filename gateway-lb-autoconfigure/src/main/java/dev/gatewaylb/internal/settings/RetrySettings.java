package dev.gatewaylb.internal.settings;

import java.util.Set;

/**
 * A service's retries.
 *
 * @param attempts extra attempts after the first
 * @param onStatuses upstream statuses retried for idempotent, replayable requests
 * @param budgetPercent retries allowed as a share of requests
 * @param budgetMinPerSecond retries allowed per second whatever the traffic
 */
public record RetrySettings(int attempts, Set<Integer> onStatuses, int budgetPercent, int budgetMinPerSecond) {

	public RetrySettings {
		onStatuses = Set.copyOf(onStatuses);
	}

}
