package dev.gatewaylb.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Hedged (backup) requests; a key that is not set is {@code null}.
 *
 * @param maxExtraLoad Backup requests the service may receive, as a fraction of its
 * requests, 0 to 1. An attempt still waiting for its response headers after the service's
 * recent latency at the percentile 1 - max-extra-load (so 0.05 waits for p95) gets a
 * backup on another endpoint; the first headers win and the other is cancelled. Only
 * requests of the hedged methods without a body are hedged. 0 turns hedging off.
 * @param minDelay Shortest wait before a backup, whatever the latency percentile says.
 * @param methods HTTP methods hedged (requests without a body only). A list given
 * replaces the default, GET, HEAD and OPTIONS: two copies of a DELETE or a PUT both reach
 * the service, and the answer of the one that wins may be the second's (a 404 for a
 * delete that succeeded). Case does not matter; an empty list hedges nothing.
 */
public record HedgeProperties(@Nullable Double maxExtraLoad, @Nullable Duration minDelay,
		@Nullable List<String> methods) {

	public HedgeProperties {
		// NaN fails both comparisons.
		if (maxExtraLoad != null && !(maxExtraLoad >= 0 && maxExtraLoad <= 1)) {
			throw new IllegalArgumentException(
					"max-extra-load: " + maxExtraLoad + " (expected: 0 (off) to 1, e.g. 0.05 to hedge after p95)");
		}
		Bounds.checkDuration("min-delay", minDelay, Bounds.MAX_TIMEOUT);
		if (methods != null) {
			List<String> upper = new ArrayList<>(methods.size());
			for (String method : methods) {
				if (method == null || !isToken(method.trim())) {
					throw new IllegalArgumentException(
							"methods: " + method + " (expected: HTTP methods, e.g. GET, HEAD, OPTIONS)");
				}
				upper.add(method.trim().toUpperCase(Locale.ROOT));
			}
			methods = List.copyOf(upper);
		}
	}

	/**
	 * Returns whether a method name is an HTTP token (RFC 9110 section 5.6.2).
	 */
	private static boolean isToken(String method) {
		if (method.isEmpty()) {
			return false;
		}
		for (int i = 0; i < method.length(); i++) {
			char c = method.charAt(i);
			boolean tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
					|| "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
			if (!tchar) {
				return false;
			}
		}
		return true;
	}

}
