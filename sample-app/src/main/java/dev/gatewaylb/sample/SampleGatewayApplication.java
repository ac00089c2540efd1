package dev.gatewaylb.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Starts a Spring Cloud Gateway whose routes, services and algorithms are all in
 * {@code application.yml}, plus the demo backends it routes to.
 * <p>
 * Nothing here is needed to use gateway-lb: the starter on the classpath and the
 * {@code gateway.lb} properties are all it takes. The beans are the demo backends, which
 * a real deployment replaces with its own services, and a log line per attempt, which it
 * replaces with its tracing system.
 */
@SpringBootApplication
@EnableConfigurationProperties(DemoBackendsProperties.class)
public class SampleGatewayApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleGatewayApplication.class, args);
	}

	// matchIfMissing mirrors the record's default, so the backends run unless turned off
	@Bean
	@ConditionalOnBooleanProperty(name = "demo.backends.enabled", matchIfMissing = true)
	DemoBackends demoBackends(DemoBackendsProperties properties) {
		return new DemoBackends(properties);
	}

	// Each gateway-lb attempt in the log, with its trace id (docs/observability.md).
	@Bean
	AttemptLog attemptLog() {
		return new AttemptLog();
	}

}
