package dev.gatewaylb.internal.settings;

import java.util.Objects;

import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.internal.affinity.AffinitySettings;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.config.Layers;
import dev.gatewaylb.internal.hedging.HedgeSettings;
import dev.gatewaylb.internal.locality.Localities;
import dev.gatewaylb.internal.loadreports.LoadReportsSettings;
import dev.gatewaylb.internal.mirror.MirrorSettings;
import dev.gatewaylb.internal.overload.ConcurrencySettings;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.websocket.DrainSettings;
import org.jspecify.annotations.Nullable;

/**
 * The resolved settings of one service: its own keys merged over the defaults. The
 * settings root: the core's settings, and one line per feature for its block, its
 * built-in defaults and its mapping, each feature mapping its own block
 * ({@code docs/architecture.md}, adding a feature).
 *
 * @param balancer the balancer's settings (the priority levels of localities included)
 * @param hashKey where a consistent-hash key comes from
 * @param upstream how to talk to the service's endpoints
 * @param health how its endpoints' health is checked
 * @param retry how failed attempts are retried
 * @param hedge when slow attempts get a backup on another endpoint
 * @param concurrency how many requests each endpoint may have in flight
 * @param affinity which endpoint a session's requests stay on
 * @param mirror which shadow service gets a copy of the requests
 * @param loadReports weights from what the endpoints report of their own load
 * @param drain what a drained endpoint's open WebSocket sessions are given
 */
public record ServiceSettings(BalancerSettings balancer, HashKey hashKey, UpstreamSettings upstream,
		HealthSettings health, RetrySettings retry, HedgeSettings hedge, ConcurrencySettings concurrency,
		AffinitySettings affinity, MirrorSettings mirror, LoadReportsSettings loadReports, DrainSettings drain) {

	/**
	 * Every key of a service at its built-in default, under {@code gateway.lb.defaults}
	 * and {@code gateway.lb.services.<id>}: the core's blocks ({@link BuiltInDefaults})
	 * and each feature's.
	 */
	static final ServiceProperties BUILT_IN = new ServiceProperties(BuiltInDefaults.ALGORITHM, java.time.Duration.ZERO,
			BuiltInDefaults.HASH_KEY, 0.0, BuiltInDefaults.PEAK_EWMA, BuiltInDefaults.POOL, BuiltInDefaults.TIMEOUTS,
			BuiltInDefaults.TLS, false, BuiltInDefaults.HEALTH, BuiltInDefaults.RETRY, HedgeSettings.BUILT_IN,
			ConcurrencySettings.BUILT_IN, AffinitySettings.BUILT_IN, Localities.BUILT_IN, MirrorSettings.BUILT_IN,
			LoadReportsSettings.BUILT_IN, DrainSettings.BUILT_IN);

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
		Objects.requireNonNull(loadReports, "loadReports");
		Objects.requireNonNull(drain, "drain");
	}

	/**
	 * Returns a service's settings: the core's, mapped by {@link SettingsMapper}, and
	 * each feature's, mapped by the feature from its block's layers.
	 * @param layers the layers of the service's keys
	 * @param zone the gateway's zone, or {@code null}
	 * @param balancer the balancer's settings but its levels
	 * @param hashKey where a consistent-hash key comes from
	 * @param upstream how to talk to the service's endpoints
	 * @param health how its endpoints' health is checked
	 * @param retry how failed attempts are retried
	 * @return the settings
	 */
	static ServiceSettings of(Layers layers, @Nullable String zone, BalancerSettings balancer, HashKey hashKey,
			UpstreamSettings upstream, HealthSettings health, RetrySettings retry) {
		return new ServiceSettings(
				balancer.withLevels(Localities.levels(layers.group(ServiceProperties::locality, "locality"), zone)),
				hashKey, upstream, health, retry, HedgeSettings.map(layers.group(ServiceProperties::hedge, "hedge")),
				ConcurrencySettings.map(layers.group(ServiceProperties::concurrency, "concurrency")),
				AffinitySettings.map(layers.group(ServiceProperties::affinity, "affinity")),
				MirrorSettings.map(layers.group(ServiceProperties::mirror, "mirror")),
				LoadReportsSettings.map(layers.group(ServiceProperties::loadReports, "load-reports")),
				DrainSettings.map(layers.group(ServiceProperties::drain, "drain")));
	}

	/**
	 * Returns the service another service's settings name, that the gateway must track to
	 * serve it: its shadow.
	 * @return the service id, or {@code null}
	 */
	public @Nullable String namedService() {
		return this.mirror.target();
	}

}
