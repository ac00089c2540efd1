package dev.gatewaylb.internal.settings;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

import dev.gatewaylb.internal.overload.core.ConcurrencyLimits;
import dev.gatewaylb.internal.request.HashKey;
import org.jspecify.annotations.Nullable;

/**
 * A service's concurrency limits and the partitions that share them.
 *
 * @param limits the algorithm and its bounds
 * @param partitionBy where a request's partition name comes from, or {@code null} for one
 * partition
 * @param partitions the share of the service's limit each partition is guaranteed, by
 * name
 * @param maxWait how long a request that finds every endpoint at its limit waits for a
 * place before it is shed, zero to shed it at once
 */
public record ConcurrencySettings(ConcurrencyLimits limits, @Nullable HashKey partitionBy,
		Map<String, Double> partitions, Duration maxWait) {

	/**
	 * No limits, no partitions.
	 */
	public static final ConcurrencySettings NONE = new ConcurrencySettings(ConcurrencyLimits.NONE, null, Map.of(),
			Duration.ZERO);

	public ConcurrencySettings {
		Objects.requireNonNull(limits, "limits");
		partitions = Map.copyOf(partitions);
		Objects.requireNonNull(maxWait, "maxWait");
	}

	/**
	 * Returns whether requests are partitioned: limits on, a source and a partition.
	 * @return whether partitioned
	 */
	public boolean partitioned() {
		return this.limits.enabled() && this.partitionBy != null && !this.partitions.isEmpty();
	}

}
