package dev.gatewaylb.gateway;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.gatewaylb.balance.Algorithm;
import dev.gatewaylb.balance.BalancerSettings;
import dev.gatewaylb.config.BalancingAlgorithm;
import dev.gatewaylb.config.Cidr;
import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.ServiceProperties;

/**
 * The runtime form of {@code gateway.lb}: immutable, built once per configuration
 * generation by {@link #from}, read by every pick. Service ids match case-insensitively,
 * as discovery services (Eureka's upper-case ids, DNS names) spell them either way.
 */
public final class GatewayLbSettings {

	private final ServiceSettings defaults;

	private final Map<String, ServiceSettings> services;

	private final List<Cidr> trustedProxies;

	GatewayLbSettings(ServiceSettings defaults, Map<String, ServiceSettings> services, List<Cidr> trustedProxies) {
		this.defaults = defaults;
		this.services = Map.copyOf(services);
		this.trustedProxies = List.copyOf(trustedProxies);
	}

	/**
	 * Maps bound properties to runtime settings.
	 * @param properties the properties, each service merged over the defaults
	 * @return the settings
	 */
	public static GatewayLbSettings from(GatewayLbProperties properties) {
		Map<String, ServiceSettings> services = new HashMap<>();
		properties.services().forEach((id, service) -> services.put(normalize(id), map(service)));
		return new GatewayLbSettings(map(properties.defaults()), services, properties.trustedProxies());
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
	 * Returns the networks whose X-Forwarded-For is believed.
	 * @return the trusted proxies
	 */
	public List<Cidr> trustedProxies() {
		return this.trustedProxies;
	}

	static ServiceSettings map(ServiceProperties service) {
		BalancerSettings balancer = new BalancerSettings(algorithm(service.algorithm()), service.slowStart().toNanos(),
				service.peakEwma().decay().toNanos());
		return new ServiceSettings(balancer, HashKey.parse(service.hashKey()));
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
