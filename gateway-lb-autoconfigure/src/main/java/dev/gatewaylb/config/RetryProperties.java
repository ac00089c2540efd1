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

	/**
	 * The most extra attempts: 10. Each is a fresh pick that avoids the endpoints already
	 * tried, so more than that is a retry storm against a service that is down.
	 */
	static final int MAX_ATTEMPTS = 10;

	/**
	 * The largest budget: 1000 percent, ten retries per request, all that
	 * {@link #MAX_ATTEMPTS} can spend.
	 */
	static final int MAX_BUDGET_PERCENT = 1000;

	/**
	 * The largest floor of retries per second: a million, more requests a second than one
	 * gateway serves.
	 */
	static final int MAX_BUDGET_MIN_PER_SECOND = 1_000_000;

	public RetryProperties {
		Bounds.checkRange("attempts", attempts, 0, MAX_ATTEMPTS);
		if (onStatuses != null) {
			for (Integer status : onStatuses) {
				if (status == null || status < 100 || status > 599) {
					throw new IllegalArgumentException(
							"on-statuses: " + status + " (expected: an HTTP status, 100 to 599)");
				}
			}
			onStatuses = List.copyOf(onStatuses);
		}
		Bounds.checkRange("budget-percent", budgetPercent, 0, MAX_BUDGET_PERCENT);
		Bounds.checkRange("budget-min-per-second", budgetMinPerSecond, 0, MAX_BUDGET_MIN_PER_SECOND);
	}

}
