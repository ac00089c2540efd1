package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.GatewayLbPropertiesBinder;
import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.GatewayLbSettings;
import dev.gatewaylb.gateway.InFlightReleaseFilter;
import dev.gatewaylb.gateway.LatencyRecordingFilter;
import dev.gatewaylb.gateway.ServiceBalancerConfiguration;
import dev.gatewaylb.gateway.SimpleDiscoveryWeights;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Balances every {@code lb://} route of Spring Cloud Gateway with gateway-lb's
 * algorithms: one {@link BalancerRegistry} for all services, a default Spring Cloud
 * LoadBalancer configuration that hands each service's picks to it, and the filters that
 * account for requests in flight and their latency.
 * <p>
 * {@code gateway.lb} is bound and validated here, so an invalid value fails start-up with
 * the property's name.
 */
@AutoConfiguration
@ConditionalOnClass({ ReactiveLoadBalancerClientFilter.class, LoadBalancerClientFactory.class })
@ConditionalOnBooleanProperty(name = "gateway.lb.enabled", matchIfMissing = true)
public final class GatewayLbAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	BalancerRegistry gatewayLbBalancerRegistry(Environment environment) {
		GatewayLbProperties properties = GatewayLbPropertiesBinder.bind(environment);
		SimpleDiscoveryWeights.validate(environment);
		return new BalancerRegistry(GatewayLbSettings.from(properties), System::nanoTime);
	}

	@Bean
	static LoadBalancerClientSpecification gatewayLbClientSpecification() {
		return new LoadBalancerClientSpecification("default." + GatewayLbAutoConfiguration.class.getName(),
				new Class<?>[] { ServiceBalancerConfiguration.class });
	}

	@Bean
	InFlightReleaseFilter gatewayLbInFlightReleaseFilter() {
		return new InFlightReleaseFilter();
	}

	@Bean
	LatencyRecordingFilter gatewayLbLatencyRecordingFilter(BalancerRegistry registry) {
		return new LatencyRecordingFilter(registry);
	}

}
