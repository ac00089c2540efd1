package dev.gatewaylb.config;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Retries of failed attempts on other endpoints; a key that is not set is {@code null}.
 *
 * @param attempts Extra attempts after the first, each a fresh pick that avoids the
 * endpoints already tried. 0 turns retries off.
 * @param onStatuses Upstream statuses that are retried, for idempotent methods (GET,
 * HEAD, OPTIONS, PUT, DELETE) whose request body can be sent again. Connect failures are
 * always retried.
 * @param budgetPercent Retries allowed as a share of requests, over a 10 s window.
 * @param budgetMinPerSecond Retries allowed per second whatever the traffic.
 */
public record RetryProperties(@Nullable Integer attempts, @Nullable List<Integer> onStatuses,
		@Nullable Integer budgetPercent, @Nullable Integer budgetMinPerSecond) {

	public RetryProperties {
		if (attempts != null && attempts < 0) {
			throw new IllegalArgumentException("attempts: " + attempts + " (expected: >= 0)");
		}
		if (onStatuses != null) {
			for (Integer status : onStatuses) {
				if (status == null || status < 100 || status > 599) {
					throw new IllegalArgumentException(
							"on-statuses: " + status + " (expected: an HTTP status, 100 to 599)");
				}
			}
			onStatuses = List.copyOf(onStatuses);
		}
		if (budgetPercent != null && budgetPercent < 0) {
			throw new IllegalArgumentException("budget-percent: " + budgetPercent + " (expected: >= 0)");
		}
		if (budgetMinPerSecond != null && budgetMinPerSecond < 0) {
			throw new IllegalArgumentException("budget-min-per-second: " + budgetMinPerSecond + " (expected: >= 0)");
		}
	}

}
