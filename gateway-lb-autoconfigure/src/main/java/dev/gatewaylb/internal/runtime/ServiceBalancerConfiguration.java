package dev.gatewaylb.internal.runtime;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The configuration gateway-lb adds to every Spring Cloud LoadBalancer child context (one
 * per service id). Registered as a default configuration, it comes before Spring Cloud's
 * own {@code LoadBalancerClientConfiguration}, whose round-robin bean then backs off; a
 * balancer the user declares for a service with
 * {@code @LoadBalancerClient(configuration = ...)} comes first and makes this one back
 * off, and gateway-lb then leaves that service's requests alone.
 * <p>
 * Not a {@code @Configuration}: component scanning must never put it in the application
 * context.
 */
public class ServiceBalancerConfiguration {

	@Bean
	@ConditionalOnMissingBean(ReactorLoadBalancer.class)
	ReactorServiceInstanceLoadBalancer gatewayLbServiceBalancer(Environment environment, ServiceRuntimes runtimes) {
		String serviceId = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
		if (serviceId == null) {
			throw new IllegalStateException(LoadBalancerClientFactory.PROPERTY_NAME + " is not set");
		}
		return new ServiceBalancer(serviceId, runtimes);
	}

}
