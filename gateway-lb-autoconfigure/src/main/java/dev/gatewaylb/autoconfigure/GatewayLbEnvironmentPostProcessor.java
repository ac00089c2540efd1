package dev.gatewaylb.autoconfigure;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Shortens Spring Cloud LoadBalancer's instance cache from 35 s to 5 s unless the
 * application sets {@code spring.cloud.loadbalancer.cache.ttl} itself: a discovery client
 * that announces no changes should not hide a new or removed instance for half a minute.
 * Added last, so every other property source wins.
 */
public final class GatewayLbEnvironmentPostProcessor implements EnvironmentPostProcessor {

	static final String SOURCE_NAME = "gatewayLbDefaults";

	static final String CACHE_TTL = "spring.cloud.loadbalancer.cache.ttl";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty("gateway.lb.enabled", Boolean.class, true)
				|| environment.getPropertySources().contains(SOURCE_NAME)) {
			return;
		}
		environment.getPropertySources().addLast(new MapPropertySource(SOURCE_NAME, Map.of(CACHE_TTL, "5s")));
	}

}
