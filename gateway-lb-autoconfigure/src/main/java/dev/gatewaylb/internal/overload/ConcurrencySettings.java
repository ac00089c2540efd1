package dev.gatewaylb.internal.overload;

import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.gatewaylb.internal.overload.core.ConcurrencyLimits;
import dev.gatewaylb.internal.request.HashKey;
import org.jspecify.annotations.Nullable;
import dev.gatewaylb.config.ConcurrencyLimitAlgorithm;
import dev.gatewaylb.config.ConcurrencyProperties;
import dev.gatewaylb.internal.config.Layers;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

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
 * @param maxWaitPerClient the share of the wait queue one client's requests may hold
 * @param dropStatuses the endpoint answers whose status is a drop for the limit
 * algorithms, one bit per status from 0 to 599 (a lookup without boxing on the event
 * loop)
 */
public record ConcurrencySettings(ConcurrencyLimits limits, @Nullable HashKey partitionBy,
		Map<String, Double> partitions, Duration maxWait, double maxWaitPerClient, BitSet dropStatuses) {

	/**
	 * No limits, no partitions.
	 */
	public static final ConcurrencySettings NONE = new ConcurrencySettings(ConcurrencyLimits.NONE, null, Map.of(),
			Duration.ZERO, 0.1, statuses(List.of(503, 504)));

	public ConcurrencySettings {
		Objects.requireNonNull(limits, "limits");
		partitions = Map.copyOf(partitions);
		Objects.requireNonNull(maxWait, "maxWait");
		// A copy of our own: the record is immutable, its bits are read on event loops.
		dropStatuses = (BitSet) dropStatuses.clone();
	}

	/**
	 * Returns whether an endpoint's answer with this status is a drop for the limit
	 * algorithms ({@code concurrency.drop-statuses}).
	 * @param status the status
	 * @return whether it is a drop
	 */
	public boolean drops(int status) {
		return status >= 0 && status < 600 && this.dropStatuses.get(status);
	}

	@Override
	public BitSet dropStatuses() {
		return (BitSet) this.dropStatuses.clone();
	}

	static BitSet statuses(List<Integer> statuses) {
		BitSet bits = new BitSet(600);
		statuses.forEach(bits::set);
		return bits;
	}

	/**
	 * Returns whether requests are partitioned: limits on, a source and a partition.
	 * @return whether partitioned
	 */
	public boolean partitioned() {
		return this.limits.enabled() && this.partitionBy != null && !this.partitions.isEmpty();
	}

	/**
	 * The built-in defaults of the {@code concurrency} block: no limit. A map has no
	 * entry here ({@code partitions}): a binder never binds one empty, and its default,
	 * no entries, is the mapper's.
	 */
	public static final ConcurrencyProperties BUILT_IN = new ConcurrencyProperties(ConcurrencyLimitAlgorithm.NONE, 20,
			1, 500, "", null, Duration.ZERO, 0.1, List.of(503, 504));

	/**
	 * Maps a service's {@code concurrency} block, or rejects bounds that do not stand to
	 * each other (each is checked alone where it is bound).
	 * @param concurrency the block's layers
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the key and its value
	 */
	public static ConcurrencySettings map(Layers.Group<ConcurrencyProperties> concurrency) {
		ConcurrencyLimits.Algorithm algorithm = switch (concurrency.get(ConcurrencyProperties::limit)) {
			case NONE -> ConcurrencyLimits.Algorithm.NONE;
			case GRADIENT2 -> ConcurrencyLimits.Algorithm.GRADIENT2;
			case VEGAS -> ConcurrencyLimits.Algorithm.VEGAS;
			case AIMD -> ConcurrencyLimits.Algorithm.AIMD;
			case FIXED -> ConcurrencyLimits.Algorithm.FIXED;
		};
		int initial = concurrency.get(ConcurrencyProperties::initialLimit);
		int min = concurrency.get(ConcurrencyProperties::minLimit);
		int max = concurrency.get(ConcurrencyProperties::maxLimit);
		// Each bound is checked where it is bound; how they stand to each other only
		// once the layers are merged.
		if (max < min) {
			throw new InvalidConfigurationPropertyValueException(
					concurrency.pathOf(ConcurrencyProperties::maxLimit, "max-limit"), max,
					"expected: at least concurrency.min-limit, " + min);
		}
		if (initial < min || initial > max) {
			throw new InvalidConfigurationPropertyValueException(
					concurrency.pathOf(ConcurrencyProperties::initialLimit, "initial-limit"), initial,
					"expected: from concurrency.min-limit to concurrency.max-limit, " + min + " to " + max);
		}
		String partitionBy = concurrency.get(ConcurrencyProperties::partitionBy).trim();
		return new ConcurrencySettings(new ConcurrencyLimits(algorithm, initial, min, max),
				partitionBy.isEmpty() ? null : HashKey.parse("partition-by", partitionBy),
				concurrency.find(ConcurrencyProperties::partitions, Map.of()),
				concurrency.get(ConcurrencyProperties::maxWait),
				concurrency.get(ConcurrencyProperties::maxWaitPerClient),
				statuses(concurrency.get(ConcurrencyProperties::dropStatuses)));
	}

}
