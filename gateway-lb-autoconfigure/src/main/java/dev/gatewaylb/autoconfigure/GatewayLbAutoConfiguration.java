package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.GatewayLbPropertiesBinder;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

import dev.gatewaylb.gateway.ActiveHealthChecks;
import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.settings.GatewayLbRefresher;
import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import dev.gatewaylb.gateway.InFlightReleaseFilter;
import dev.gatewaylb.gateway.InstanceCacheEviction;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.ServiceBalancerConfiguration;
import dev.gatewaylb.gateway.settings.SimpleDiscoveryWeights;
import dev.gatewaylb.gateway.RetryFilter;
import dev.gatewaylb.gateway.SplitCounters;
import dev.gatewaylb.gateway.SplitFilter;
import dev.gatewaylb.gateway.UpstreamClients;
import dev.gatewaylb.gateway.UpstreamResponseFilter;
import dev.gatewaylb.gateway.UpstreamRoutingFilter;
import dev.gatewaylb.split.AffinityCookie;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.HttpClientCustomizer;
import org.springframework.cloud.gateway.config.HttpClientFactory;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.config.HttpClientSslConfigurer;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * Balances every {@code lb://} route of Spring Cloud Gateway with gateway-lb's
 * algorithms: one {@link BalancerRegistry} for all services, a default Spring Cloud
 * LoadBalancer configuration that hands each service's picks to it, and the filters that
 * account for requests in flight and their latency.
 * <p>
 * {@code gateway.lb} is bound and validated here, so an invalid value fails start-up with
 * the property's name.
 */
@AutoConfiguration(after = GatewayAutoConfiguration.class)
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
	InFlightReleaseFilter gatewayLbInFlightReleaseFilter(BalancerRegistry registry) {
		return new InFlightReleaseFilter(registry);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean(HttpClient.class)
	static class UpstreamConfiguration {

		@Bean
		@ConditionalOnMissingBean
		UpstreamClients gatewayLbUpstreamClients(HttpClientProperties properties, ServerProperties serverProperties,
				ObjectProvider<HttpClientSslConfigurer> sslConfigurer,
				ObjectProvider<HttpClientCustomizer> customizers) {
			List<HttpClientCustomizer> ordered = customizers.orderedStream().toList();
			HttpClientSslConfigurer ssl = sslConfigurer.getIfAvailable();
			return new UpstreamClients((provider) -> {
				// The gateway's own factory, on this upstream's pool: proxy, SSL,
				// compression, header limits and customizers as the gateway has them.
				HttpClientFactory factory = new HttpClientFactory(properties, serverProperties, ssl,
						new ArrayList<>(ordered)) {

					@Override
					protected ConnectionProvider buildConnectionProvider(HttpClientProperties ignored) {
						return provider;
					}

					@Override
					protected HttpClient configureSsl(HttpClient httpClient) {
						return (ssl != null) ? super.configureSsl(httpClient) : httpClient;
					}

				};
				factory.setSingleton(false);
				try {
					return factory.getObject();
				}
				catch (Exception ex) {
					throw new IllegalStateException("Cannot build an upstream HTTP client", ex);
				}
			});
		}

		@Bean
		UpstreamRoutingFilter gatewayLbUpstreamRoutingFilter(HttpClient httpClient,
				ObjectProvider<List<HttpHeadersFilter>> headersFilters, HttpClientProperties properties,
				UpstreamClients clients, LiveSettings settings) {
			return new UpstreamRoutingFilter(httpClient, headersFilters, properties, clients, settings);
		}

		@Bean
		ActiveHealthChecks gatewayLbActiveHealthChecks(BalancerRegistry registry, UpstreamClients clients,
				LiveSettings settings) {
			return new ActiveHealthChecks(registry, clients, settings);
		}

		@Bean
		RetryFilter gatewayLbRetryFilter(LiveSettings settings) {
			return new RetryFilter(settings, System::nanoTime);
		}

		@Bean
		UpstreamResponseFilter gatewayLbUpstreamResponseFilter(BalancerRegistry registry, LiveSettings settings,
				UpstreamClients clients) {
			return new UpstreamResponseFilter(registry, settings, clients);
		}

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
