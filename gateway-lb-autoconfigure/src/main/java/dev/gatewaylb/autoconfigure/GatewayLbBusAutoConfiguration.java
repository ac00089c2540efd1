package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.internal.bus.BusFleetDecisions;
import dev.gatewaylb.bus.RolloutVerdictEvent;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.rollout.SplitRollouts;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.bus.ServiceMatcher;
import org.springframework.cloud.bus.event.Destination;
import org.springframework.cloud.bus.jackson.RemoteApplicationEventScan;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Rollout verdicts and drains shared by the fleet, when the application has Spring Cloud
 * Bus ({@code spring-cloud-starter-bus-amqp} or {@code -kafka}) and it is enabled.
 * Without it each replica acts alone. The events are registered with the bus's JSON
 * converter, so every replica can read them.
 * <p>
 * The bus is optional: this class names its types by string only, and the configuration
 * that uses them is nested behind the class condition, so that an application without the
 * bus never loads a class that refers to it.
 */
@AutoConfiguration(after = GatewayLbAutoConfiguration.class,
		afterName = { "org.springframework.cloud.bus.BusAutoConfiguration",
				"org.springframework.cloud.bus.PathServiceMatcherAutoConfiguration" })
@ConditionalOnClass(name = "org.springframework.cloud.bus.event.RemoteApplicationEvent")
@ConditionalOnProperty(name = "spring.cloud.bus.enabled", matchIfMissing = true)
public final class GatewayLbBusAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean({ SplitRollouts.class, ServiceMatcher.class, Destination.Factory.class })
	@RemoteApplicationEventScan(basePackageClasses = RolloutVerdictEvent.class)
	static class BusConfiguration {

		@Bean
		@ConditionalOnMissingBean(FleetDecisions.class)
		BusFleetDecisions gatewayLbBusFleetDecisions(ApplicationEventPublisher publisher, ServiceMatcher matcher,
				Destination.Factory destinations, LiveSettings settings, Environment environment,
				SplitRollouts rollouts, ServiceRuntimes runtimes) {
			// Spring Cloud Bus's default bus id starts with the same name.
			String application = environment.getProperty("spring.application.name", "application");
			BusFleetDecisions decisions = new BusFleetDecisions(publisher, matcher, destinations,
					settings.get().fleet(), application, System::currentTimeMillis, rollouts, runtimes);
			settings.onApply((applied) -> decisions.secretsRefreshed(applied.fleet()));
			return decisions;
		}

	}

}
