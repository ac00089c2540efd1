package dev.gatewaylb.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Weights from what each endpoint reports of its own load (ORCA's
 * {@code endpoint-load-metrics}); a key that is not set is {@code null}.
 *
 * @param enabled Whether to read endpoint-load-metrics (TEXT, JSON or BIN) and
 * endpoint-load-metrics-bin from every answer and weigh the endpoints by them
 * (round-robin, least-requests and power-of-two-choices). While enabled, these headers do
 * not reach the client.
 * @param utilization What counts as an endpoint's utilization: the first of the listed
 * standard fields (application_utilization, cpu_utilization, mem_utilization) reported
 * above 0; when named metrics are listed (named_metrics.kv_cache), the largest of those
 * reported, and the standard fields only if none is.
 * @param blackoutPeriod How long an endpoint must report before its weight counts; until
 * then it takes the mean weight.
 * @param weightExpirationPeriod How long a weight counts after the endpoint's last usable
 * report; after that it takes the mean weight again.
 * @param errorUtilizationPenalty How much an endpoint's errors add to its utilization:
 * weight = qps / (utilization + eps / qps x penalty).
 * @param maxWeightRatio Largest weight an endpoint may have, in times the mean weight of
 * the service's other endpoints.
 * @param probe Out-of-band reports: a GET on a path of each endpoint, for backends that
 * report there rather than on their answers.
 */
public record LoadReportsProperties(@Nullable Boolean enabled, @Nullable List<String> utilization,
		@Nullable Duration blackoutPeriod, @Nullable Duration weightExpirationPeriod,
		@Nullable Double errorUtilizationPenalty, @Nullable Double maxWeightRatio,
		@NestedConfigurationProperty @Nullable Probe probe) {

	/**
	 * The standard fields a {@code utilization} entry may name.
	 */
	static final List<String> STANDARD_FIELDS = List.of("application_utilization", "cpu_utilization",
			"mem_utilization");

	static final String NAMED_PREFIX = "named_metrics.";

	public LoadReportsProperties {
		if (utilization != null) {
			List<String> fields = new ArrayList<>(utilization.size());
			for (String field : utilization) {
				String trimmed = (field != null) ? field.trim() : "";
				boolean named = trimmed.startsWith(NAMED_PREFIX) && trimmed.length() > NAMED_PREFIX.length();
				if (!named && !STANDARD_FIELDS.contains(trimmed)) {
					throw new IllegalArgumentException("utilization: " + field
							+ " (expected: application_utilization, cpu_utilization, mem_utilization or named_metrics.<name>)");
				}
				fields.add(trimmed);
			}
			if (fields.isEmpty()) {
				throw new IllegalArgumentException(
						"utilization: [] (expected: at least one field, e.g. application_utilization)");
			}
			utilization = List.copyOf(fields);
		}
		Bounds.checkDuration("blackout-period", blackoutPeriod, Bounds.MAX_PERIOD);
		Bounds.checkPositiveDuration("weight-expiration-period", weightExpirationPeriod, Bounds.MAX_PERIOD);
		// NaN fails both comparisons.
		if (errorUtilizationPenalty != null && !(errorUtilizationPenalty >= 0 && errorUtilizationPenalty <= 100)) {
			throw new IllegalArgumentException(
					"error-utilization-penalty: " + errorUtilizationPenalty + " (expected: 0 to 100, e.g. 1.0)");
		}
		if (maxWeightRatio != null && !(maxWeightRatio >= 1 && maxWeightRatio <= Bounds.MAX_FACTOR)) {
			throw new IllegalArgumentException(
					"max-weight-ratio: " + maxWeightRatio + " (expected: 1 to " + Bounds.MAX_FACTOR + ", e.g. 10)");
		}
	}

	/**
	 * Out-of-band load reports.
	 *
	 * @param path Path of each endpoint that answers a GET with the endpoint-load-metrics
	 * header, such as /orca; empty turns the probe off.
	 * @param interval How often each endpoint is asked.
	 */
	public record Probe(@Nullable String path, @Nullable Duration interval) {

		public Probe {
			if (path != null && !path.isBlank()
					&& (!path.startsWith("/") || path.chars().anyMatch(Character::isWhitespace))) {
				throw new IllegalArgumentException(
						"probe.path: " + path + " (expected: a path such as /orca, or empty)");
			}
			Bounds.checkPositiveDuration("probe.interval", interval, Bounds.MAX_PERIOD);
		}

	}

}
