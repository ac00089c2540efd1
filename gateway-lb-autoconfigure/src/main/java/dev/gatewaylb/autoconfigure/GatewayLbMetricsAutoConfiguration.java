package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.actuate.GatewayLbMetrics;
import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.RetryFilter;
import dev.gatewaylb.gateway.SplitCounters;
import dev.gatewaylb.gateway.UpstreamClients;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * gateway-lb's Micrometer meters, when Micrometer and a meter registry are present.
 */
@AutoConfiguration(after = { GatewayLbAutoConfiguration.class, MetricsAutoConfiguration.class,
		CompositeMeterRegistryAutoConfiguration.class })
@ConditionalOnClass({ MeterRegistry.class, MetricsAutoConfiguration.class })
@ConditionalOnBean({ MeterRegistry.class, BalancerRegistry.class })
public final class GatewayLbMetricsAutoConfiguration {

	@Bean
	GatewayLbMetrics gatewayLbMetrics(MeterRegistry meterRegistry, BalancerRegistry registry, LiveSettings settings,
			SplitCounters counters, ObjectProvider<UpstreamClients> upstreams, ObjectProvider<RetryFilter> retries) {
		return new GatewayLbMetrics(meterRegistry, registry, settings, counters, upstreams.getIfAvailable(),
				retries.getIfAvailable());
	}

}
