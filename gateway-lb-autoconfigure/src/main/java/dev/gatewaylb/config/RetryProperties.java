package dev.gatewaylb.config;

import java.util.List;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Retries of failed attempts on other endpoints.
 *
 * @param attempts Extra attempts after the first, each a fresh pick that avoids the
 * endpoints already tried. 0 turns retries off.
 * @param onStatuses Upstream statuses that are retried, for idempotent methods (GET,
 * HEAD, OPTIONS, PUT, DELETE) whose request body can be sent again. Connect failures are
 * always retried.
 * @param budgetPercent Retries allowed as a share of requests, over a 10 s window.
 * @param budgetMinPerSecond Retries allowed per second whatever the traffic.
 */
public record RetryProperties(@DefaultValue("1") int attempts, @DefaultValue( {
		"502", "503", "504" }) List<Integer> onStatuses, @DefaultValue("20") int budgetPercent,
		@DefaultValue("10") int budgetMinPerSecond){

	public RetryProperties {
		onStatuses = List.copyOf(onStatuses);
		if (attempts < 0) {
			throw new IllegalArgumentException("attempts: " + attempts + " (expected: >= 0)");
		}
		for (Integer status : onStatuses) {
			if (status == null || status < 100 || status > 599) {
				throw new IllegalArgumentException(
						"on-statuses: " + status + " (expected: an HTTP status, 100 to 599)");
			}
		}
		if (budgetPercent < 0) {
			throw new IllegalArgumentException("budget-percent: " + budgetPercent + " (expected: >= 0)");
		}
		if (budgetMinPerSecond < 0) {
			throw new IllegalArgumentException("budget-min-per-second: " + budgetMinPerSecond + " (expected: >= 0)");
		}
	}

}
