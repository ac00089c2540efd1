package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.actuate.GatewayLbEndpoint;
import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.SplitCounters;
import dev.gatewaylb.gateway.UpstreamClients;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code gatewaylb} actuator endpoint, when actuator is present and the endpoint is
 * exposed ({@code management.endpoints.web.exposure.include}). Its drain operation is a
 * write: it is reachable only when exposed, like every actuator write.
 */
@AutoConfiguration(after = GatewayLbAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(BalancerRegistry.class)
@ConditionalOnAvailableEndpoint(GatewayLbEndpoint.class)
public final class GatewayLbEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	GatewayLbEndpoint gatewayLbEndpoint(BalancerRegistry registry, LiveSettings settings, SplitCounters counters,
			ObjectProvider<UpstreamClients> upstreams) {
		return new GatewayLbEndpoint(registry, settings, counters, upstreams.getIfAvailable());
	}

}
