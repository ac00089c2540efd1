package dev.gatewaylb.internal.settings;

import java.util.Objects;

import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.request.HashKey;

/**
 * The resolved settings of one service: its own keys merged over the defaults.
 *
 * @param balancer the balancer's settings
 * @param hashKey where a consistent-hash key comes from
 * @param upstream how to talk to the service's endpoints
 * @param health how its endpoints' health is checked
 * @param retry how failed attempts are retried
 * @param hedge when slow attempts get a backup on another endpoint
 * @param concurrency how many requests each endpoint may have in flight
 * @param affinity which endpoint a session's requests stay on
 * @param mirror which shadow service gets a copy of the requests
 */
public record ServiceSettings(BalancerSettings balancer, HashKey hashKey, UpstreamSettings upstream,
		HealthSettings health, RetrySettings retry, HedgeSettings hedge, ConcurrencySettings concurrency,
		AffinitySettings affinity, MirrorSettings mirror) {

	public ServiceSettings {
		Objects.requireNonNull(balancer, "balancer");
		Objects.requireNonNull(hashKey, "hashKey");
		Objects.requireNonNull(upstream, "upstream");
		Objects.requireNonNull(health, "health");
		Objects.requireNonNull(retry, "retry");
		Objects.requireNonNull(hedge, "hedge");
		Objects.requireNonNull(concurrency, "concurrency");
		Objects.requireNonNull(affinity, "affinity");
		Objects.requireNonNull(mirror, "mirror");
	}

}
