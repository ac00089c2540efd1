package dev.gatewaylb.autoconfigure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import dev.gatewaylb.internal.control.ScheduledControlThread;
import dev.gatewaylb.internal.discovery.InstanceCacheEviction;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.gateway.filter.AttemptFilter;
import dev.gatewaylb.gateway.filter.InFlightReleaseFilter;
import dev.gatewaylb.gateway.filter.UpstreamRoutingFilter;
import dev.gatewaylb.internal.runtime.ServiceBalancer;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerCacheAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

class GatewayLbAutoConfigurationTests {

	/**
	 * What the gateway's own auto-configuration contributes that gateway-lb builds on:
	 * its shared client, and the properties its client factory reads.
	 */
	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GatewayLbAutoConfiguration.class, LoadBalancerAutoConfiguration.class))
		.withBean(HttpClient.class, HttpClient::create)
		.withBean(HttpClientProperties.class)
		.withBean(ServerProperties.class);

	@Test
	void balancesEveryServiceThroughItsRuntime() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ServiceRuntimes.class)
				.hasSingleBean(InFlightReleaseFilter.class)
				.hasSingleBean(AttemptFilter.class)
				.hasSingleBean(UpstreamRoutingFilter.class);
			LoadBalancerClientFactory factory = context.getBean(LoadBalancerClientFactory.class);
			assertThat(factory.getInstance("catalog", ReactorServiceInstanceLoadBalancer.class))
				.isInstanceOf(ServiceBalancer.class);
		});
	}

	@Test
	void evictsTheInstanceCacheOnDiscoveryEvents() {
		this.runner.withConfiguration(AutoConfigurations.of(LoadBalancerCacheAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(InstanceCacheEviction.class));
	}

	@Test
	void backsOffWhenDisabled() {
		this.runner.withPropertyValues("gateway.lb.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(ServiceRuntimes.class)
				.doesNotHaveBean(InFlightReleaseFilter.class)
				.doesNotHaveBean("gatewayLbClientSpecification");
		});
	}

	@Test
	void backsOffWithoutTheGateway() {
		this.runner.withClassLoader(new FilteredClassLoader(ReactiveLoadBalancerClientFilter.class))
			.run((context) -> assertThat(context).doesNotHaveBean(ServiceRuntimes.class));
	}

	@Test
	void backsOffWithoutTheGatewaysHttpClient() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(GatewayLbAutoConfiguration.class, LoadBalancerAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(ServiceRuntimes.class));
	}

	@Test
	void keepsAnInstanceSourceTheUserDeclares() {
		InstanceSource mine = new InstanceSource() {

			@Override
			public boolean balancesHere(String serviceId) {
				return true;
			}

			@Override
			public Mono<java.util.List<org.springframework.cloud.client.ServiceInstance>> instances(String serviceId) {
				return Mono.just(java.util.List.of());
			}

		};
		this.runner.withBean("mySource", InstanceSource.class, () -> mine)
			.run((context) -> assertThat(context).hasSingleBean(InstanceSource.class).hasBean("mySource"));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(classes = { InFlightReleaseFilter.class, AttemptFilter.class, UpstreamRoutingFilter.class })
	void keepsAFilterTheUserDeclares(Class<?> filter) {
		keepsTheUsers(filter);
	}

	private <T> void keepsTheUsers(Class<T> type) {
		T mine = mock(type);
		this.runner.withBean("mine", type, () -> mine)
			.run((context) -> assertThat(context).hasSingleBean(type).getBean(type).isSameAs(mine));
	}

	@Test
	void runsEveryJobOnOneControlThreadThatStopsWithTheContext() {
		AtomicReference<ScheduledControlThread> control = new AtomicReference<>();
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ScheduledControlThread.class);
			control.set(context.getBean(ScheduledControlThread.class));
			assertThat(control.get().call(Duration.ofSeconds(10), () -> Thread.currentThread().getName()))
				.isEqualTo("gateway-lb-control");
			assertThat(control.get().isStopped()).isFalse();
		});
		assertThat(control.get().isStopped()).isTrue();
	}

	@Test
	void leavesAServiceToTheBalancerTheUserConfiguresForIt() {
		this.runner
			.withBean("legacy.LoadBalancerClientSpecification", LoadBalancerClientSpecification.class,
					() -> new LoadBalancerClientSpecification("legacy", new Class<?>[] { RandomConfiguration.class }))
			.run((context) -> {
				LoadBalancerClientFactory factory = context.getBean(LoadBalancerClientFactory.class);
				assertThat(factory.getInstance("legacy", ReactorServiceInstanceLoadBalancer.class))
					.isInstanceOf(RandomLoadBalancer.class);
				assertThat(factory.getInstance("other", ReactorServiceInstanceLoadBalancer.class))
					.isInstanceOf(ServiceBalancer.class);
			});
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			gateway.lb.services.catalog.algorithm | fastest  | gateway.lb.services.catalog.algorithm
			gateway.lb.defaults.hash-key          | ip       | gateway.lb.defaults
			gateway.lb.defaults.slow-start        | soon     | gateway.lb.defaults.slow-start
			gateway.lb.defaults.peak-ewma.decay   | 10 parsecs | gateway.lb.defaults.peak-ewma.decay
			""")
	void failsStartUpOnInvalidConfigurationNamingPropertyAndValue(String property, String value, String named) {
		this.runner.withPropertyValues(property + "=" + value).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains(named).contains(value);
		});
	}

	@Test
	void failsStartUpOnAPassiveFailureStatusBelow500NamingPropertyAndValue() {
		// A 4xx is the client's doing: counting it would let clients eject endpoints.
		this.runner.withPropertyValues("gateway.lb.services.catalog.health.passive.on-statuses=502,429")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains("gateway.lb.services.catalog.health.passive")
					.contains("on-statuses: 429 (expected: a 5xx status)");
			});
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					all weights 0      | gateway.lb.splits.shop.targets.a=0,gateway.lb.splits.shop.targets.b=0 | gateway.lb.splits.shop.targets | weights sum to more than 0
					a split of a split | gateway.lb.splits.shop.targets.outer=1,gateway.lb.splits.outer.targets.x=1 | gateway.lb.splits.shop.targets.outer | cannot target another split
					a service name     | gateway.lb.splits.catalog.targets.a=1,gateway.lb.services.catalog.algorithm=least-requests | gateway.lb.splits.catalog | cannot share its name
					a bad cookie name  | gateway.lb.splits.shop.targets.a=1,gateway.lb.splits.shop.sticky.cookie=my cookie | gateway.lb.splits.shop.sticky | 'my cookie'
					a negative weight  | gateway.lb.splits.shop.targets.a=-3 | gateway.lb.splits.shop | targets.a: -3 (expected: 0 to 1000000)
					a bad same-site    | gateway.lb.splits.shop.targets.a=1,gateway.lb.splits.shop.sticky.cookie=c,gateway.lb.splits.shop.sticky.same-site=sometimes | gateway.lb.splits.shop.sticky.same-site | sometimes
					a negative max-age | gateway.lb.splits.shop.targets.a=1,gateway.lb.splits.shop.sticky.cookie=c,gateway.lb.splits.shop.sticky.max-age=-1s | gateway.lb.splits.shop.sticky | max-age: -1s
					SameSite=None, not Secure | gateway.lb.splits.shop.targets.a=1,gateway.lb.splits.shop.sticky.cookie=c,gateway.lb.splits.shop.sticky.same-site=none | gateway.lb.splits.shop.sticky | same-site: None with secure: false
					no targets         | gateway.lb.splits.shop.override-header=X-Target | gateway.lb.splits.shop.targets | weights sum to more than 0
					""")
	void failsStartUpOnAnInvalidSplitNamingTheProperty(String mistake, String properties, String named, String reason) {
		this.runner.withPropertyValues(properties.split(",")).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains(named).contains(reason);
		});
	}

	@Test
	void acceptsASplitToServicesDiscoveryDoesNotKnowYetAndAWeightOfZero() {
		this.runner
			.withPropertyValues("gateway.lb.splits.shop.targets.shop-blue=0",
					"gateway.lb.splits.shop.targets.shop-green=100")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsStartUpOnANegativeWeightInSimpleDiscoveryMetadata() {
		String instance = "spring.cloud.discovery.client.simple.instances.catalog[1]";
		this.runner
			.withPropertyValues("spring.cloud.discovery.client.simple.instances.catalog[0].uri=http://127.0.0.1:1",
					instance + ".uri=http://127.0.0.1:2", instance + ".metadata.weight=-3")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).contains(instance + ".metadata.weight")
					.contains("'-3'")
					.contains("expected: an integer >= 0");
			});
	}

	private static String messages(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			messages.append(t.getMessage()).append('\n');
		}
		return messages.toString();
	}

	static class RandomConfiguration {

		@Bean
		ReactorServiceInstanceLoadBalancer random(Environment environment, LoadBalancerClientFactory factory) {
			String name = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
			ObjectProvider<ServiceInstanceListSupplier> suppliers = factory.getLazyProvider(name,
					ServiceInstanceListSupplier.class);
			return new RandomLoadBalancer(suppliers, name);
		}

	}

}
