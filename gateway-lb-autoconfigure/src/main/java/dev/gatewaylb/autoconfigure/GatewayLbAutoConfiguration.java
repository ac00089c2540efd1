package dev.gatewaylb.autoconfigure;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import dev.gatewaylb.internal.actuate.GatewayLbHealthIndicator;
import dev.gatewaylb.internal.autoconfigure.Features;
import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.internal.control.ScheduledControlThread;
import dev.gatewaylb.internal.discovery.InstanceCacheEviction;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.internal.discovery.LoadBalancerInstanceSource;
import dev.gatewaylb.internal.discovery.RouteServices;
import dev.gatewaylb.internal.exchange.LoadReportTrailers;
import dev.gatewaylb.gateway.filter.AttemptFilter;
import dev.gatewaylb.gateway.filter.InFlightReleaseFilter;
import dev.gatewaylb.gateway.filter.GrpcTrailersOnly;
import dev.gatewaylb.gateway.filter.UpstreamRoutingFilter;
import dev.gatewaylb.internal.runtime.ActiveHealthChecks;
import dev.gatewaylb.internal.runtime.ServiceBalancer;
import dev.gatewaylb.internal.runtime.ServiceBalancerConfiguration;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.DnsSettings;
import dev.gatewaylb.internal.settings.GatewayLbRefresher;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.internal.upstream.GatewayTls;
import dev.gatewaylb.internal.upstream.UpstreamResolver;
import dev.gatewaylb.internal.upstream.Upstreams;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.rollout.RolloutPlan;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.split.StickyCookie;
import dev.gatewaylb.internal.observation.ObservedControlEvents;
import io.micrometer.observation.ObservationRegistry;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import org.jspecify.annotations.Nullable;
import reactor.netty.resources.LoopResources;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayLoadBalancerProperties;
import org.springframework.cloud.gateway.config.HttpClientCustomizer;
import org.springframework.cloud.gateway.config.HttpClientFactory;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.config.HttpClientSslConfigurer;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.context.annotation.Scope;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.socket.server.WebSocketService;

/**
 * Balances every {@code lb://} route of Spring Cloud Gateway with gateway-lb, one nested
 * configuration per layer of the request path: the settings, the upstream pools, the
 * per-service runtimes (and Spring Cloud LoadBalancer's view of them), and the filters,
 * with the one control thread their background work runs on.
 * <p>
 * {@code gateway.lb} is bound and validated here, so an invalid value fails start-up with
 * the property's name, and published as the {@code gatewayLbProperties} bean for
 * {@code /actuator/configprops}.
 * <p>
 * A user may replace what gateway-lb offers as API: the {@link InstanceSource} and each
 * of the three filters (and the fleet's {@code FleetDecisions}, which the bus
 * configuration provides). The other beans are internal: declaring one of them does not
 * replace gateway-lb's.
 */
@AutoConfiguration(after = GatewayAutoConfiguration.class)
@ConditionalOnClass({ ReactiveLoadBalancerClientFilter.class, LoadBalancerClientFactory.class })
@ConditionalOnBooleanProperty(name = "gateway.lb.enabled", matchIfMissing = true)
@ConditionalOnBean(HttpClient.class)
public final class GatewayLbAutoConfiguration {

	@Bean
	static LoadBalancerClientSpecification gatewayLbClientSpecification() {
		return new LoadBalancerClientSpecification("default." + GatewayLbAutoConfiguration.class.getName(),
				new Class<?>[] { ServiceBalancerConfiguration.class });
	}

	/**
	 * The control thread every background job of gateway-lb runs on; stopped by
	 * {@link ControlLifecycle}, and again, harmlessly, when the context closes.
	 */
	@Bean
	static ScheduledControlThread gatewayLbControlThread() {
		return new ScheduledControlThread();
	}

	/**
	 * The {@code gatewayLb} health indicator, when actuator's health is on the class
	 * path: DOWN when a background loop is stuck
	 * ({@code management.health.gatewaylb.enabled: false} turns it off).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HealthIndicator.class)
	@ConditionalOnEnabledHealthIndicator("gatewaylb")
	static class HealthConfiguration {

		@Bean
		GatewayLbHealthIndicator gatewayLbHealthIndicator(ScheduledControlThread control,
				ObjectProvider<InstanceSource> source) {
			return new GatewayLbHealthIndicator(control, source.getIfAvailable());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SettingsConfiguration {

		@Bean
		LiveSettings gatewayLbLiveSettings(Environment environment) {
			return new LiveSettings(GatewayLbSettings.bind(environment));
		}

		/**
		 * Publishes {@code gateway.lb} as bound for the settings in force, which
		 * {@code /actuator/configprops} lists with every other
		 * {@code @ConfigurationProperties} bean. A prototype, because the endpoint asks
		 * for the bean on each read: a refresh binds a new value into the live settings,
		 * and a singleton would go on showing start-up's. Binding stays the live
		 * settings' job, so that start-up and refresh accept the same configuration;
		 * Boot's post-processor finds nothing to bind on a record it did not construct.
		 */
		@Bean
		@Scope(ConfigurableBeanFactory.SCOPE_PROTOTYPE)
		GatewayLbProperties gatewayLbProperties(LiveSettings settings) {
			return settings.properties();
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(EnvironmentChangeEvent.class)
		static class RefreshConfiguration {

			@Bean
			GatewayLbRefresher gatewayLbRefresher(Environment environment, LiveSettings settings) {
				return new GatewayLbRefresher(environment, settings);
			}

		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UpstreamConfiguration {

		@Bean
		Upstreams gatewayLbUpstreams(HttpClientProperties properties, ServerProperties serverProperties,
				ObjectProvider<HttpClientSslConfigurer> sslConfigurer, ObjectProvider<SslBundles> sslBundles,
				ObjectProvider<HttpClientCustomizer> customizers, ScheduledControlThread control,
				DnsAddressResolverGroup gatewayLbResolver, ObjectProvider<ReactorResourceFactory> reactorResources) {
			List<HttpClientCustomizer> ordered = customizers.orderedStream().toList();
			HttpClientSslConfigurer ssl = sslConfigurer.getIfAvailable();
			SslBundles bundles = sslBundles.getIfAvailable();
			// A service's own trust roots replace the gateway's, and only those: its
			// client certificate and handshake settings stay.
			Upstreams.Tls tls = (ssl != null && bundles != null) ? new GatewayTls(properties.getSsl(), bundles)
					: Upstreams.Tls.JDK;
			return new Upstreams((provider) -> {
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
				HttpClient client;
				try {
					client = factory.getObject();
				}
				catch (Exception ex) {
					throw new IllegalStateException("Cannot build an upstream HTTP client", ex);
				}
				// On the server's own event loops, so that a request's upstream
				// connection
				// can live on the loop of the request (pool.loop-affinity): Spring Boot's
				// server runs on this factory's loops, which are Reactor Netty's global
				// ones only when the factory uses the global resources.
				LoopResources loops = serverLoops(reactorResources.getIfAvailable());
				return (loops != null) ? client.runOn(loops) : client;
			}, tls, control, gatewayLbResolver);
		}

		/**
		 * The loops of the server's resource factory, or {@code null} when there is none
		 * or it has not started (its loops are then Reactor Netty's global ones, which
		 * the client takes by default).
		 */
		private static @Nullable LoopResources serverLoops(@Nullable ReactorResourceFactory factory) {
			if (factory == null || factory.isUseGlobalResources()) {
				return null;
			}
			try {
				return factory.getLoopResources();
			}
			catch (IllegalStateException notStarted) {
				return null;
			}
		}

		/**
		 * The resolver of every upstream, from {@code gateway.lb.dns} at start-up; closed
		 * with the application.
		 */
		@Bean(destroyMethod = "close")
		DnsAddressResolverGroup gatewayLbResolver(LiveSettings settings) {
			DnsSettings dns = settings.get().dns();
			return UpstreamResolver.create(dns.minTtl(), dns.maxTtl(), dns.negativeTtl(), dns.servers());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RuntimeConfiguration {

		@Bean
		@ConditionalOnMissingBean
		InstanceSource gatewayLbInstanceSource(LoadBalancerClientFactory clientFactory,
				ObjectProvider<ReactiveDiscoveryClient> discovery) {
			return new LoadBalancerInstanceSource(clientFactory, ServiceBalancer.class, discovery.getIfAvailable());
		}

		@Bean
		ServiceRuntimes gatewayLbServiceRuntimes(LiveSettings settings, InstanceSource source, Upstreams upstreams,
				ScheduledControlThread control, ObjectProvider<ObservationRegistry> observations) {
			return new ServiceRuntimes(settings, source, upstreams, control, ThreadLocalRandom::current, Features.all(),
					ObservedControlEvents.of(observations.getIfAvailable()));
		}

		@Bean
		RouteServices gatewayLbRouteServices(ServiceRuntimes runtimes, LiveSettings settings) {
			return new RouteServices(runtimes::routed, settings);
		}

		@Bean
		ActiveHealthChecks gatewayLbActiveHealthChecks(ServiceRuntimes runtimes, ScheduledControlThread control) {
			return new ActiveHealthChecks(runtimes, control);
		}

		@Bean
		SplitCounters gatewayLbSplitCounters(LiveSettings settings) {
			SplitCounters counters = new SplitCounters();
			settings.onApply(counters::prepare);
			return counters;
		}

		@Bean
		SplitRollouts gatewayLbSplitRollouts(ScheduledControlThread control, LiveSettings settings,
				ObjectProvider<FleetDecisions> fleet, ObjectProvider<ObservationRegistry> observations) {
			SplitRollouts rollouts = new SplitRollouts(control, System::currentTimeMillis,
					() -> fleet.getIfAvailable(() -> FleetDecisions.NONE),
					ObservedControlEvents.of(observations.getIfAvailable()));
			settings.onApply((applied) -> rollouts.plans(rolloutPlans(applied)));
			return rollouts;
		}

		@Bean
		ControlLifecycle gatewayLbControlLifecycle(ScheduledControlThread control, ServiceRuntimes runtimes,
				SplitRollouts rollouts, ActiveHealthChecks activeHealthChecks) {
			return new ControlLifecycle(control, List.of(runtimes::start, rollouts::start, activeHealthChecks::start),
					List.of(runtimes::stop));
		}

		/**
		 * Returns the rollout plans of the settings by split name: what the rollouts
		 * receive, since they do not know the settings.
		 */
		static Map<String, RolloutPlan> rolloutPlans(GatewayLbSettings settings) {
			Map<String, RolloutPlan> plans = new LinkedHashMap<>();
			for (SplitSettings split : settings.splits().values()) {
				RolloutPlan plan = split.rollout();
				if (plan != null) {
					plans.put(split.split().name(), plan);
				}
			}
			return plans;
		}

		@Bean
		@ConditionalOnClass(EnvironmentChangeEvent.class)
		InstanceCacheEviction gatewayLbInstanceCacheEviction(BeanFactory beanFactory, ServiceRuntimes runtimes) {
			// Spring Cloud declares its cache manager with autowireCandidate = false, so
			// that it never becomes the application's CacheManager; an injected provider
			// cannot see it, a lookup in the bean factory can (as its own builder does).
			return new InstanceCacheEviction(beanFactory.getBeanProvider(LoadBalancerCacheManager.class),
					runtimes::pollNow);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FilterConfiguration {

		@Bean
		@ConditionalOnMissingBean
		InFlightReleaseFilter gatewayLbInFlightReleaseFilter() {
			return new InFlightReleaseFilter();
		}

		@Bean
		@ConditionalOnMissingBean
		AttemptFilter gatewayLbAttemptFilter(LiveSettings settings, ServiceRuntimes runtimes,
				SplitCounters splitCounters, SplitRollouts rollouts,
				ObjectProvider<GatewayLoadBalancerProperties> loadBalancerProperties,
				ObjectProvider<List<HttpHeadersFilter>> headersFilters,
				ObjectProvider<ObservationRegistry> observations) {
			GatewayLoadBalancerProperties gateway = loadBalancerProperties.getIfAvailable();
			return new AttemptFilter(settings, runtimes,
					new StickyCookie(System::currentTimeMillis, new SecureRandom().nextLong()), splitCounters, rollouts,
					gateway != null && gateway.isUse404(), () -> headersFilters.getIfAvailable(List::of),
					observations.getIfAvailable());
		}

		@Bean
		@ConditionalOnMissingBean
		UpstreamRoutingFilter gatewayLbUpstreamRoutingFilter(HttpClient httpClient,
				ObjectProvider<List<HttpHeadersFilter>> headersFilters, HttpClientProperties properties,
				ObjectProvider<WebSocketService> webSocketService) {
			return new UpstreamRoutingFilter(httpClient, headersFilters, properties, webSocketService.getIfAvailable());
		}

		@Bean
		@ConditionalOnMissingBean
		GrpcTrailersOnly gatewayLbGrpcTrailersOnly() {
			return new GrpcTrailersOnly();
		}

		/**
		 * Reads a gRPC endpoint's load report from its trailers ({@code load-reports}).
		 */
		@Bean
		HttpHeadersFilter gatewayLbLoadReportTrailers() {
			return new LoadReportTrailers();
		}

	}

}
