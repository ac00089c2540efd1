package dev.gatewaylb.config;

import java.util.List;
import java.util.Map;

import dev.gatewaylb.request.Cidr;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configuration of gateway-lb, under {@code gateway.lb}, as written: {@code defaults} and
 * each entry of {@code services} hold only the keys they set. The settings layer resolves
 * each service's keys over the defaults and the built-in defaults.
 *
 * @param enabled Whether gateway-lb balances lb:// routes. When false, Spring Cloud
 * LoadBalancer's own balancers do.
 * @param defaults Settings of every service, unless overridden under services.
 * @param services Per-service settings, keyed by the service id of lb://id routes. Each
 * key not set falls back to the same key under defaults.
 * @param splits Traffic splits, keyed by the name routes use in lb://name.
 * @param trustedProxies Networks (IP addresses or CIDRs) of the proxies in front of the
 * gateway: their X-Forwarded-For header is believed to find the client's address (the
 * client-ip hash key, a split's override-trusted-clients), and their X-Forwarded-Proto
 * https marks the sticky and affinity cookies Secure.
 * @param fleet The fleet channel over Spring Cloud Bus: the fleet's name, its signing
 * secret, what this replica follows. Taken at start-up.
 * @param dns How hostname endpoints are resolved: the cache's TTL bounds and the DNS
 * servers, shared by every service. Taken at start-up.
 * @param actuator Who may reach the management context: the Host names it answers beyond
 * loopback names and IP literals.
 */
@ConfigurationProperties("gateway.lb")
public record GatewayLbProperties(@DefaultValue("true") boolean enabled,
		@NestedConfigurationProperty @Nullable ServiceProperties defaults,
		@Nullable Map<String, ServiceProperties> services, @Nullable Map<String, SplitProperties> splits,
		@Nullable List<Cidr> trustedProxies, @NestedConfigurationProperty @Nullable FleetProperties fleet,
		@NestedConfigurationProperty @Nullable DnsProperties dns,
		@NestedConfigurationProperty @Nullable ActuatorProperties actuator) {

	public GatewayLbProperties {
		defaults = (defaults != null) ? defaults : ServiceProperties.NONE;
		services = (services != null) ? Map.copyOf(services) : Map.of();
		splits = (splits != null) ? Map.copyOf(splits) : Map.of();
		trustedProxies = (trustedProxies != null) ? List.copyOf(trustedProxies) : List.of();
		fleet = (fleet != null) ? fleet : FleetProperties.NONE;
		dns = (dns != null) ? dns : DnsProperties.NONE;
		actuator = (actuator != null) ? actuator : ActuatorProperties.NONE;
	}

	@Override
	public ActuatorProperties actuator() {
		return (this.actuator != null) ? this.actuator : ActuatorProperties.NONE;
	}

	@Override
	public FleetProperties fleet() {
		return (this.fleet != null) ? this.fleet : FleetProperties.NONE;
	}

	@Override
	public ServiceProperties defaults() {
		return (this.defaults != null) ? this.defaults : ServiceProperties.NONE;
	}

	@Override
	public Map<String, ServiceProperties> services() {
		return (this.services != null) ? this.services : Map.of();
	}

	@Override
	public Map<String, SplitProperties> splits() {
		return (this.splits != null) ? this.splits : Map.of();
	}

	@Override
	public List<Cidr> trustedProxies() {
		return (this.trustedProxies != null) ? this.trustedProxies : List.of();
	}

}
