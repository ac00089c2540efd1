package dev.gatewaylb.config;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Hedged (backup) requests; a key that is not set is {@code null}.
 *
 * @param maxExtraLoad Backup requests the service may receive, as a fraction of its
 * requests, 0 to 1. An attempt still waiting for its response headers after the service's
 * recent latency at the percentile 1 - max-extra-load (so 0.05 waits for p95) gets a
 * backup on another endpoint; the first headers win and the other is cancelled. Only
 * idempotent requests without a body are hedged. 0 turns hedging off.
 * @param minDelay Shortest wait before a backup, whatever the latency percentile says.
 */
public record HedgeProperties(@Nullable Double maxExtraLoad, @Nullable Duration minDelay) {

	public HedgeProperties {
		// NaN fails both comparisons.
		if (maxExtraLoad != null && !(maxExtraLoad >= 0 && maxExtraLoad <= 1)) {
			throw new IllegalArgumentException(
					"max-extra-load: " + maxExtraLoad + " (expected: 0 (off) to 1, e.g. 0.05 to hedge after p95)");
		}
		if (minDelay != null && minDelay.isNegative()) {
			throw new IllegalArgumentException("min-delay: " + Durations.format(minDelay) + " (expected: >= 0s)");
		}
	}

}
