package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.GatewayLbPropertiesBinder;
import java.security.SecureRandom;

import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.GatewayLbRefresher;
import dev.gatewaylb.gateway.GatewayLbSettings;
import dev.gatewaylb.gateway.InFlightReleaseFilter;
import dev.gatewaylb.gateway.InstanceCacheEviction;
import dev.gatewaylb.gateway.LatencyRecordingFilter;
import dev.gatewaylb.gateway.LiveSettings;
import dev.gatewaylb.gateway.ServiceBalancerConfiguration;
import dev.gatewaylb.gateway.SimpleDiscoveryWeights;
import dev.gatewaylb.gateway.SplitCounters;
import dev.gatewaylb.gateway.SplitFilter;
import dev.gatewaylb.split.AffinityCookie;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
	LiveSettings gatewayLbLiveSettings(Environment environment) {
		GatewayLbProperties properties = GatewayLbPropertiesBinder.bind(environment);
		SimpleDiscoveryWeights.validate(environment);
		return new LiveSettings(GatewayLbSettings.from(properties));
	}

	@Bean
	@ConditionalOnMissingBean
	BalancerRegistry gatewayLbBalancerRegistry(LiveSettings settings) {
		return new BalancerRegistry(settings, System::nanoTime);
	}

	@Bean
	@ConditionalOnMissingBean
	SplitCounters gatewayLbSplitCounters(LiveSettings settings) {
		SplitCounters counters = new SplitCounters();
		settings.onApply(counters::prepare);
		return counters;
	}

	@Bean
	SplitFilter gatewayLbSplitFilter(LiveSettings settings, SplitCounters counters) {
		return new SplitFilter(settings, new AffinityCookie(System::currentTimeMillis, new SecureRandom().nextLong()),
				counters);
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

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(EnvironmentChangeEvent.class)
	static class RefreshConfiguration {

		@Bean
		GatewayLbRefresher gatewayLbRefresher(Environment environment, LiveSettings settings) {
			return new GatewayLbRefresher(environment, settings);
		}

		@Bean
		InstanceCacheEviction gatewayLbInstanceCacheEviction(BeanFactory beanFactory) {
			// Spring Cloud declares its cache manager with autowireCandidate = false, so
			// that it never becomes the application's CacheManager; an injected provider
			// cannot see it, a lookup in the bean factory can (as its own builder does).
			return new InstanceCacheEviction(beanFactory.getBeanProvider(LoadBalancerCacheManager.class));
		}

	}

}
