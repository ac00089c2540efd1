package dev.gatewaylb.autoconfigure;

import dev.gatewaylb.internal.actuate.GatewayLbMetrics;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.upstream.Upstreams;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import io.micrometer.core.instrument.MeterRegistry;

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
@ConditionalOnBean({ MeterRegistry.class, ServiceRuntimes.class })
public final class GatewayLbMetricsAutoConfiguration {

	@Bean
	GatewayLbMetrics gatewayLbMetrics(MeterRegistry meterRegistry, ServiceRuntimes runtimes, Upstreams upstreams,
			LiveSettings settings, SplitCounters counters, SplitRollouts rollouts) {
		return new GatewayLbMetrics(meterRegistry, runtimes, upstreams, settings, counters, rollouts);
	}

}
