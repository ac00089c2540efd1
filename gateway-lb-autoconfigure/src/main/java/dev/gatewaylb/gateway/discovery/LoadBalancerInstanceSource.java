package dev.gatewaylb.gateway.discovery;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;

/**
 * Instances from each service's Spring Cloud LoadBalancer supplier chain: discovery and
 * its cache, or whatever supplier the application configured for the service (zone
 * preference, health checks, ...). A supplier is asked for the whole list without a
 * request, so one that filters per request (hints, request-based stickiness) is not
 * consulted per request.
 * <p>
 * The service's child context is created at the first call, on the caller's thread.
 */
public final class LoadBalancerInstanceSource implements InstanceSource {

	private final LoadBalancerClientFactory clientFactory;

	private final Class<? extends ReactorServiceInstanceLoadBalancer> ours;

	private final Map<String, ServiceInstanceListSupplier> suppliers = new ConcurrentHashMap<>();

	/**
	 * Creates the source.
	 * @param clientFactory Spring Cloud LoadBalancer's per-service contexts
	 * @param ours the type of the balancer gateway-lb gives every service context unless
	 * the application declares one of its own for it
	 */
	public LoadBalancerInstanceSource(LoadBalancerClientFactory clientFactory,
			Class<? extends ReactorServiceInstanceLoadBalancer> ours) {
		this.clientFactory = clientFactory;
		this.ours = ours;
	}

	@Override
	public boolean balancesHere(String serviceId) {
		return this.ours
			.isInstance(this.clientFactory.getInstance(serviceId, ReactorServiceInstanceLoadBalancer.class));
	}

	@Override
	public Mono<List<ServiceInstance>> instances(String serviceId) {
		ServiceInstanceListSupplier supplier = this.suppliers.computeIfAbsent(serviceId, (id) -> {
			ServiceInstanceListSupplier found = this.clientFactory.getInstance(id, ServiceInstanceListSupplier.class);
			return (found != null) ? found : new NoopServiceInstanceListSupplier();
		});
		return supplier.get().next().defaultIfEmpty(List.of());
	}

}
