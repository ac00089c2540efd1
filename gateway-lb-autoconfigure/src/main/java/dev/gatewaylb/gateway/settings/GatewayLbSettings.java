package dev.gatewaylb.gateway.settings;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.gatewaylb.balance.Algorithm;
import dev.gatewaylb.balance.BalancerSettings;
import dev.gatewaylb.config.BalancingAlgorithm;
import dev.gatewaylb.config.Cidr;
import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.HealthProperties;
import dev.gatewaylb.config.RetryProperties;
import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.config.SplitProperties;
import dev.gatewaylb.config.StickyProperties;
import dev.gatewaylb.health.OutlierDetection;
import dev.gatewaylb.split.Split;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * The runtime form of {@code gateway.lb}: immutable, built once per configuration
 * generation by {@link #from}, read by every pick. Service ids match case-insensitively,
 * as discovery services (Eureka's upper-case ids, DNS names) spell them either way.
 */
public final class GatewayLbSettings {

	private final ServiceSettings defaults;

	private final Map<String, ServiceSettings> services;

	private final Map<String, SplitSettings> splits;

	private final List<Cidr> trustedProxies;

	GatewayLbSettings(ServiceSettings defaults, Map<String, ServiceSettings> services,
			Map<String, SplitSettings> splits, List<Cidr> trustedProxies) {
		this.defaults = defaults;
		this.services = Map.copyOf(services);
		this.splits = Map.copyOf(splits);
		this.trustedProxies = List.copyOf(trustedProxies);
	}

	/**
	 * Maps bound properties to runtime settings and checks the rules that span entries.
	 * @param properties the properties, each service merged over the defaults
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the property when a split
	 * has no positive weight, targets another split, or shares its name with a service
	 * entry
	 */
	public static GatewayLbSettings from(GatewayLbProperties properties) {
		ServiceSettings defaults = map("gateway.lb.defaults", properties.defaults());
		Map<String, ServiceSettings> services = new HashMap<>();
		properties.services()
			.forEach((id, service) -> services.put(normalize(id), map("gateway.lb.services." + id, service)));
		Map<String, SplitSettings> splits = new HashMap<>();
		properties.splits().forEach((name, split) -> splits.put(normalize(name), map(name, split, properties)));
		return new GatewayLbSettings(defaults, services, splits, properties.trustedProxies());
	}

	/**
	 * Returns the settings of a service: its own, or the defaults.
	 * @param serviceId the id in {@code lb://<id>}
	 * @return the settings
	 */
	public ServiceSettings forService(String serviceId) {
		return this.services.getOrDefault(normalize(serviceId), this.defaults);
	}

	/**
	 * Returns the ids of the services with their own settings, in lower case.
	 * @return the configured service ids
	 */
	public Set<String> configuredServices() {
		return this.services.keySet();
	}

	/**
	 * Returns the split called {@code name}.
	 * @param name the host of an {@code lb://} URI
	 * @return the split, or {@code null} when {@code name} is not a split
	 */
	public @Nullable SplitSettings split(String name) {
		return this.splits.get(normalize(name));
	}

	/**
	 * Returns every split by its lower-case name.
	 * @return the splits
	 */
	public Map<String, SplitSettings> splits() {
		return this.splits;
	}

	/**
	 * Returns the networks whose X-Forwarded-For is believed.
	 * @return the trusted proxies
	 */
	public List<Cidr> trustedProxies() {
		return this.trustedProxies;
	}

	/**
	 * Maps one service's merged properties.
	 * @param path the property path of the service, for messages
	 * @param service the properties
	 */
	static ServiceSettings map(String path, ServiceProperties service) {
		BalancerSettings balancer = new BalancerSettings(algorithm(service.algorithm()), service.slowStart().toNanos(),
				service.peakEwma().decay().toNanos());
		HealthProperties.Passive passive = service.health().passive();
		HealthProperties.Active active = service.health().active();
		HealthSettings health = new HealthSettings(
				new OutlierDetection(passive.consecutiveFailures(), passive.baseEjectionTime().toNanos(),
						passive.maxEjectionPercent()),
				new HealthSettings.Active(active.enabled(), active.path(), active.interval(), active.timeout()));
		RetryProperties retry = service.retry();
		return new ServiceSettings(balancer, HashKey.parse(service.hashKey()), upstream(path, service), health,
				new RetrySettings(retry.attempts(), Set.copyOf(retry.onStatuses()), retry.budgetPercent(),
						retry.budgetMinPerSecond()));
	}

	private static UpstreamSettings upstream(String path, ServiceProperties service) {
		String trustedCa = service.tls().trustedCa();
		List<java.security.cert.X509Certificate> certificates = null;
		if (!trustedCa.isBlank()) {
			try {
				certificates = UpstreamSettings.readCertificates(trustedCa.trim());
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidConfigurationPropertyValueException(path + ".tls.trusted-ca", trustedCa,
						ex.getMessage());
			}
		}
		return new UpstreamSettings(service.pool().maxConnections(), service.pool().maxPending(),
				service.pool().pendingTimeout(), service.pool().maxIdleTime(), service.timeouts().connect(),
				service.timeouts().response(), service.timeouts().bodyIdle(), certificates, service.http2());
	}

	private static SplitSettings map(String name, SplitProperties split, GatewayLbProperties properties) {
		String key = "gateway.lb.splits." + name;
		if (properties.services().keySet().stream().anyMatch(name::equalsIgnoreCase)) {
			throw new InvalidConfigurationPropertyValueException(key, name,
					"a split cannot share its name with an entry of gateway.lb.services");
		}
		List<Split.Target> targets = new ArrayList<>();
		split.targets().forEach((service, weight) -> {
			if (properties.splits().keySet().stream().anyMatch(service::equalsIgnoreCase)) {
				throw new InvalidConfigurationPropertyValueException(key + ".targets." + service, service,
						"a split cannot target another split");
			}
			targets.add(new Split.Target(service, weight));
		});
		Split compiled;
		try {
			compiled = Split.of(name, targets);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException(key + ".targets", split.targets(),
					"expected: targets whose weights sum to more than 0");
		}
		StickyProperties sticky = split.sticky();
		SplitSettings.StickyCookie cookie = (sticky != null)
				? new SplitSettings.StickyCookie(sticky.cookie(), sticky.maxAge(), sticky.path(), sticky.secure(),
						sticky.httpOnly(), SplitSettings.StickyCookie.sameSite(sticky.sameSite()))
				: null;
		return new SplitSettings(compiled, cookie, split.overrideHeader());
	}

	static Algorithm algorithm(BalancingAlgorithm algorithm) {
		return switch (algorithm) {
			case ROUND_ROBIN -> Algorithm.ROUND_ROBIN;
			case LEAST_REQUESTS -> Algorithm.LEAST_REQUESTS;
			case POWER_OF_TWO_CHOICES -> Algorithm.POWER_OF_TWO_CHOICES;
			case CONSISTENT_HASH -> Algorithm.CONSISTENT_HASH;
			case PEAK_EWMA -> Algorithm.PEAK_EWMA;
		};
	}

	private static String normalize(String serviceId) {
		// Returns the same instance when already lower case: no allocation per pick.
		return serviceId.toLowerCase(Locale.ROOT);
	}

}
