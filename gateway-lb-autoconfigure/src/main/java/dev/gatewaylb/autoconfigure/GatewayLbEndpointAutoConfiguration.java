package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.internal.actuate.GatewayLbEndpoint;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.rollout.SplitRollouts;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The {@code gatewaylb} actuator endpoint, when actuator is present and the endpoint is
 * exposed ({@code management.endpoints.web.exposure.include}). Its drain operation is a
 * write: it is reachable only when exposed, like every actuator write.
 */
@AutoConfiguration(after = GatewayLbAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(ServiceRuntimes.class)
@ConditionalOnAvailableEndpoint(GatewayLbEndpoint.class)
public final class GatewayLbEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	GatewayLbEndpoint gatewayLbEndpoint(ServiceRuntimes runtimes, LiveSettings settings, SplitCounters counters,
			SplitRollouts rollouts, ObjectProvider<FleetDecisions> fleet) {
		return new GatewayLbEndpoint(runtimes, settings, counters, rollouts,
				() -> fleet.getIfAvailable(() -> FleetDecisions.NONE));
	}

	/**
	 * Warns at start-up when the endpoint's writes are open on the application's port.
	 */
	@Bean
	static WritableEndpointWarning gatewayLbWritableEndpointWarning(Environment environment) {
		return new WritableEndpointWarning(environment);
	}

}
