package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.bus.BusFleetDecisions;
import dev.gatewaylb.bus.RolloutVerdictEvent;
import dev.gatewaylb.gateway.runtime.ServiceRuntimes;
import dev.gatewaylb.gateway.runtime.SplitRollouts;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.cloud.bus.BusAutoConfiguration;
import org.springframework.cloud.bus.ConditionalOnBusEnabled;
import org.springframework.cloud.bus.PathServiceMatcherAutoConfiguration;
import org.springframework.cloud.bus.ServiceMatcher;
import org.springframework.cloud.bus.event.Destination;
import org.springframework.cloud.bus.event.RemoteApplicationEvent;
import org.springframework.cloud.bus.jackson.RemoteApplicationEventScan;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;

/**
 * Rollout verdicts and drains shared by the fleet, when the application has Spring Cloud
 * Bus ({@code spring-cloud-starter-bus-amqp} or {@code -kafka}) and it is enabled.
 * Without it each replica acts alone. The events are registered with the bus's JSON
 * converter, so every replica can read them.
 */
@AutoConfiguration(after = { GatewayLbAutoConfiguration.class, BusAutoConfiguration.class,
		PathServiceMatcherAutoConfiguration.class })
@ConditionalOnClass(RemoteApplicationEvent.class)
@ConditionalOnBusEnabled
@ConditionalOnBean({ SplitRollouts.class, ServiceMatcher.class, Destination.Factory.class })
@RemoteApplicationEventScan(basePackageClasses = RolloutVerdictEvent.class)
public final class GatewayLbBusAutoConfiguration {

	@Bean
	BusFleetDecisions gatewayLbBusFleetDecisions(ApplicationEventPublisher publisher, ServiceMatcher matcher,
			Destination.Factory destinations, SplitRollouts rollouts, ServiceRuntimes runtimes) {
		return new BusFleetDecisions(publisher, matcher, destinations, rollouts, runtimes);
	}

}
