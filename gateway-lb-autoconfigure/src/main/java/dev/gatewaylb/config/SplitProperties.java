package dev.gatewaylb.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.request.Cidr;
import dev.gatewaylb.internal.request.Tokens;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * A traffic split: routes to {@code lb://<split name>} go to one of the target services.
 *
 * @param targets Target service ids and their weights, in order. A weight may be 0 (the
 * blue side of a finished blue-green switch), but not all of them.
 * @param sticky Sticky cookie that keeps a client on the target it was first sent to.
 * Absent: every request is split on its own.
 * @param overrideHeader Request header that names the target to use, for testers. A value
 * that is not one of the split's targets is ignored, and the header is removed before the
 * request is forwarded, whoever sent it. Absent: no override.
 * @param overrideTrustedClients Networks (IP addresses or CIDRs) of the clients whose
 * override header is honoured, matched against the client's address as resolved through
 * trusted-proxies. Empty: nobody's.
 * @param rollout A progressive rollout of one target, judged against the others, with
 * automatic rollback. Absent: the weights stay as configured.
 */
public record SplitProperties(@Nullable Map<String, Integer> targets,
		@NestedConfigurationProperty @Nullable StickyProperties sticky, @Nullable String overrideHeader,
		@Nullable List<Cidr> overrideTrustedClients, @NestedConfigurationProperty @Nullable RolloutProperties rollout) {

	/**
	 * The largest weight of a target: a million, a share as fine as one part per million
	 * of a split whose weights sum to that.
	 */
	static final int MAX_WEIGHT = 1_000_000;

	public SplitProperties {
		// LinkedHashMap.copyOf does not exist; keep the configuration order of the
		// targets.
		targets = (targets != null) ? new LinkedHashMap<>(targets) : new LinkedHashMap<>();
		targets.forEach((target, weight) -> {
			if (weight == null || weight < 0 || weight > MAX_WEIGHT) {
				throw new IllegalArgumentException(
						"targets." + target + ": " + weight + " (expected: 0 to " + MAX_WEIGHT + ")");
			}
		});
		if (overrideHeader != null && !Tokens.isToken(overrideHeader)) {
			throw new IllegalArgumentException("override-header: '" + overrideHeader + "' (expected: a header name)");
		}
	}

	@Override
	public List<Cidr> overrideTrustedClients() {
		return (this.overrideTrustedClients != null) ? List.copyOf(this.overrideTrustedClients) : List.of();
	}

	@Override
	public Map<String, Integer> targets() {
		return (this.targets != null) ? Collections.unmodifiableMap(this.targets) : Map.of();
	}

}
