package dev.gatewaylb.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.gatewaylb.internal.settings.LiveSettings;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;

import org.springframework.boot.actuate.autoconfigure.context.properties.ConfigurationPropertiesReportEndpointAutoConfiguration;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint.ConfigurationPropertiesBeanDescriptor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.ConfigurationPropertiesAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.cloud.autoconfigure.ConfigurationPropertiesRebinderAutoConfiguration;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code gateway.lb} in {@code /actuator/configprops}, with Boot's binding post-processor
 * and Spring Cloud's rebinder in the context, as in an application.
 */
class ConfigurationPropertiesReportTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GatewayLbAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
				ConfigurationPropertiesAutoConfiguration.class, ConfigurationPropertiesRebinderAutoConfiguration.class,
				ConfigurationPropertiesReportEndpointAutoConfiguration.class))
		.withBean(HttpClient.class, HttpClient::create)
		.withBean(HttpClientProperties.class)
		.withBean(ServerProperties.class)
		.withPropertyValues("management.endpoints.web.exposure.include=configprops",
				"management.endpoint.configprops.show-values=always",
				"gateway.lb.services.catalog.algorithm=least-requests",
				"gateway.lb.splits.shop.targets.shop-stable=100", "gateway.lb.splits.shop.targets.shop-canary=0",
				"gateway.lb.splits.shop.rollout.target=shop-canary");

	@Test
	void listsGatewayLbAsBoundForTheSettingsInForce() {
		this.runner.run((context) -> {
			ConfigurationPropertiesBeanDescriptor gatewayLb = gatewayLb(context);
			assertThat(gatewayLb.getPrefix()).isEqualTo("gateway.lb");
			assertThat(gatewayLb.getProperties()).extractingByKey("services")
				.isEqualTo(Map.of("catalog", Map.of("algorithm", "LEAST_REQUESTS")));
			assertThat(gatewayLb.getProperties()).extractingByKey("splits")
				.isEqualTo(Map.of("shop", Map.of("targets", Map.of("shop-stable", 100, "shop-canary", 0),
						"overrideTrustedClients", List.of(), "rollout", Map.of("target", "shop-canary"))));
			assertThat(gatewayLb.getProperties()).containsEntry("enabled", true);
		});
	}

	@Test
	void showsTheValuesOfARefreshOnceItIsApplied() {
		this.runner.run((context) -> {
			refresh(context, Map.of("gateway.lb.services.catalog.algorithm", "peak-ewma"));
			assertThat(context.getBean(LiveSettings.class).generation()).isEqualTo(2);
			assertThat(gatewayLb(context).getProperties()).extractingByKey("services")
				.isEqualTo(Map.of("catalog", Map.of("algorithm", "PEAK_EWMA")));
		});
	}

	@Test
	void goesOnShowingTheValuesInForceWhenARefreshIsRejected() {
		this.runner.run((context) -> {
			refresh(context, Map.of("gateway.lb.services.catalog.algorithm", "peak-ewma",
					"gateway.lb.services.catalog.slow-start", "-5s"));
			assertThat(context.getBean(LiveSettings.class).lastError()).contains("gateway.lb.services.catalog",
					"slow-start: -5s");
			assertThat(gatewayLb(context).getProperties()).extractingByKey("services")
				.isEqualTo(Map.of("catalog", Map.of("algorithm", "LEAST_REQUESTS")));
		});
	}

	@Test
	void isAbsentWhenGatewayLbIsOff() {
		this.runner.withPropertyValues("gateway.lb.enabled=false")
			.run((context) -> assertThat(context.getBean(ConfigurationPropertiesReportEndpoint.class)
				.configurationPropertiesWithPrefix("gateway.lb")
				.getContexts()
				.values()
				.iterator()
				.next()
				.getBeans()).isEmpty());
	}

	private static ConfigurationPropertiesBeanDescriptor gatewayLb(ConfigurableApplicationContext context) {
		return context.getBean(ConfigurationPropertiesReportEndpoint.class)
			.configurationPropertiesWithPrefix("gateway.lb")
			.getContexts()
			.values()
			.iterator()
			.next()
			.getBeans()
			.get("gatewayLbProperties");
	}

	private static void refresh(ConfigurableApplicationContext context, Map<String, Object> values) {
		context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("refresh", values));
		context.publishEvent(new EnvironmentChangeEvent(context, Set.copyOf(values.keySet())));
	}

}
