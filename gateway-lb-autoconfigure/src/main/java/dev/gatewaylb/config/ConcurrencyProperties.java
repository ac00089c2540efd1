package dev.gatewaylb.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.request.HashKey;
import org.jspecify.annotations.Nullable;

/**
 * Adaptive concurrency limits of a service's endpoints; a key that is not set is
 * {@code null}.
 *
 * @param limit Limit algorithm of each endpoint's requests in flight (Netflix
 * concurrency-limits). An endpoint at its limit is not picked; when every endpoint is,
 * the request is answered 503 with Retry-After at once and never retried. none turns
 * limits off.
 * @param initialLimit Limit of each endpoint before its first samples, and the limit of
 * fixed.
 * @param minLimit Lowest limit an endpoint's algorithm may set.
 * @param maxLimit Highest limit an endpoint's algorithm may set.
 * @param partitionBy Where a request's partition name comes from: header:NAME,
 * cookie:NAME or client-ip, spelt as hash-key. Empty puts every request in one partition.
 * A header or a cookie is taken only from a request whose peer is in trusted-proxies; any
 * other request is of no listed partition.
 * @param partitions Share of the service's limit each partition is guaranteed, by
 * partition name, each above 0, summing to at most 1; the rest is for requests of no
 * listed partition. A partition under its share is never shed, nor one within a burst
 * allowance past it (three times the share's square root) while its demand is past the
 * share by less than that allowance and less than the share; shedding starts with the
 * partitions over theirs.
 * @param maxWait How long a request that finds every endpoint at its limit may wait for a
 * place before it is shed; 0s sheds it at once. Waiters are woken as requests end, those
 * of the partition furthest under its share first; at most a partition's share of the
 * limit waits.
 * @param maxWaitPerClient Share of the wait queue (max-wait) one client address (an IPv6
 * one by its /64) may hold, above 0, at most 1; at least one waiter each. A client's
 * requests past it are shed at once rather than wait.
 * @param dropStatuses Endpoint answers whose status counts as a drop for the limit
 * algorithms, as timeouts and connection failures always do. A list given replaces the
 * default, 503 and 504: an application's 500, which a client can provoke at will, is no
 * sign of overload.
 */
public record ConcurrencyProperties(@Nullable ConcurrencyLimitAlgorithm limit, @Nullable Integer initialLimit,
		@Nullable Integer minLimit, @Nullable Integer maxLimit, @Nullable String partitionBy,
		@Nullable Map<String, Double> partitions, @Nullable Duration maxWait, @Nullable Double maxWaitPerClient,
		@Nullable List<Integer> dropStatuses) {

	/**
	 * The longest wait for a place: a wait is for a burst to pass, not for an overload.
	 */
	static final Duration MAX_WAIT = Duration.ofSeconds(10);

	public ConcurrencyProperties {
		Bounds.checkRange("initial-limit", initialLimit, 1, Bounds.MAX_PER_ENDPOINT);
		Bounds.checkRange("min-limit", minLimit, 1, Bounds.MAX_PER_ENDPOINT);
		Bounds.checkRange("max-limit", maxLimit, 1, Bounds.MAX_PER_ENDPOINT);
		if (maxWait != null && (maxWait.isNegative() || maxWait.compareTo(MAX_WAIT) > 0)) {
			throw new IllegalArgumentException(
					"max-wait: " + maxWait + " (expected: from 0s, shed at once, to " + MAX_WAIT.toSeconds() + "s)");
		}
		// NaN fails both comparisons.
		if (maxWaitPerClient != null && !(maxWaitPerClient > 0 && maxWaitPerClient <= 1)) {
			throw new IllegalArgumentException("max-wait-per-client: " + maxWaitPerClient
					+ " (expected: a share of the wait queue above 0, at most 1, e.g. 0.1)");
		}
		if (dropStatuses != null) {
			for (Integer status : dropStatuses) {
				if (status == null || status < 100 || status > 599) {
					throw new IllegalArgumentException(
							"drop-statuses: " + status + " (expected: HTTP statuses, 100 to 599, e.g. 503, 504)");
				}
			}
			dropStatuses = List.copyOf(dropStatuses);
		}
		if (partitionBy != null && !partitionBy.isBlank()) {
			HashKey.parse("partition-by", partitionBy.trim());
		}
		if (partitions != null) {
			double sum = 0;
			for (Map.Entry<String, Double> partition : partitions.entrySet()) {
				Double share = partition.getValue();
				// NaN fails both comparisons.
				if (share == null || !(share > 0 && share <= 1)) {
					throw new IllegalArgumentException("partitions." + partition.getKey() + ": " + share
							+ " (expected: a share of the limit above 0, at most 1, e.g. 0.8)");
				}
				sum += share;
			}
			// A little slack for shares such as 0.7 + 0.2 + 0.1, whose double sum is
			// above 1.
			if (sum > 1 + 1e-9) {
				throw new IllegalArgumentException(
						"partitions: " + partitions + " (expected: shares that sum to at most 1)");
			}
			partitions = Map.copyOf(new LinkedHashMap<>(partitions));
		}
	}

}
