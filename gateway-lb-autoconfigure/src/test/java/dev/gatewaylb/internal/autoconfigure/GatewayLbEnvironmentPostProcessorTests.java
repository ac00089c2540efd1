package dev.gatewaylb.internal.autoconfigure;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link GatewayLbEnvironmentPostProcessor}.
 */
class GatewayLbEnvironmentPostProcessorTests {

	private final GatewayLbEnvironmentPostProcessor processor = new GatewayLbEnvironmentPostProcessor(
			(destination) -> destination.get());

	@Test
	void addsTheInstanceCacheDefaultToEveryEnvironmentThoughTheHostIsCheckedOnce() {
		// Spring Cloud's refresh post-processes a copy of the environment again: the copy
		// needs the default as much as the first one did.
		for (int i = 0; i < 3; i++) {
			StandardEnvironment environment = new StandardEnvironment();
			this.processor.postProcessEnvironment(environment, new SpringApplication());
			assertThat(environment.getProperty(GatewayLbEnvironmentPostProcessor.CACHE_TTL)).isEqualTo("5s");
		}
	}

	@Test
	void leavesAnEnvironmentWithTheStarterTurnedOffAlone() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", Map.of("gateway.lb.enabled", "false")));
		this.processor.postProcessEnvironment(environment, new SpringApplication());
		assertThat(environment.getPropertySources().contains(GatewayLbEnvironmentPostProcessor.SOURCE_NAME)).isFalse();
	}

}
