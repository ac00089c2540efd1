package dev.gatewaylb.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * A traffic split: routes to {@code lb://<split name>} go to one of the target services.
 *
 * @param targets Target service ids and their weights, in order. A weight may be 0 (the
 * blue side of a finished blue-green switch), but not all of them.
 * @param sticky Affinity cookie that keeps a client on the target it was first sent to.
 * Absent: every request is split on its own.
 * @param overrideHeader Request header that names the target to use, for testers. A value
 * that is not one of the split's targets is ignored. Absent: no override.
 */
public record SplitProperties(@Nullable Map<String, Integer> targets,
		@NestedConfigurationProperty @Nullable StickyProperties sticky, @Nullable String overrideHeader) {

	public SplitProperties {
		// LinkedHashMap.copyOf does not exist; keep the configuration order of the
		// targets.
		targets = (targets != null) ? new LinkedHashMap<>(targets) : new LinkedHashMap<>();
		targets.forEach((target, weight) -> {
			if (weight == null || weight < 0) {
				throw new IllegalArgumentException("targets." + target + ": " + weight + " (expected: >= 0)");
			}
		});
		if (overrideHeader != null && !ServiceProperties.TOKEN.matcher(overrideHeader).matches()) {
			throw new IllegalArgumentException("override-header: '" + overrideHeader + "' (expected: a header name)");
		}
	}

	@Override
	public Map<String, Integer> targets() {
		return (this.targets != null) ? Collections.unmodifiableMap(this.targets) : Map.of();
	}

}
