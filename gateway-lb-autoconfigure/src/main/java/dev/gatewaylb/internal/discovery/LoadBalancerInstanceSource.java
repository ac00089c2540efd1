package dev.gatewaylb.internal.discovery;

import dev.gatewaylb.gateway.discovery.InstanceSource;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
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
 * The service's child context is created at the first call, on the caller's thread. The
 * services discovery knows come from the application's {@link ReactiveDiscoveryClient}
 * (Spring Cloud's composite of every registry), none without one.
 */
public final class LoadBalancerInstanceSource implements InstanceSource {

	private final LoadBalancerClientFactory clientFactory;

	private final Class<? extends ReactorServiceInstanceLoadBalancer> ours;

	private final @Nullable ReactiveDiscoveryClient discovery;

	private final Map<String, ServiceInstanceListSupplier> suppliers = new ConcurrentHashMap<>();

	/**
	 * Creates the source.
	 * @param clientFactory Spring Cloud LoadBalancer's per-service contexts
	 * @param ours the type of the balancer gateway-lb gives every service context unless
	 * the application declares one of its own for it
	 * @param discovery lists the services discovery knows, or {@code null} for none
	 */
	public LoadBalancerInstanceSource(LoadBalancerClientFactory clientFactory,
			Class<? extends ReactorServiceInstanceLoadBalancer> ours, @Nullable ReactiveDiscoveryClient discovery) {
		this.clientFactory = clientFactory;
		this.ours = ours;
		this.discovery = discovery;
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

	@Override
	public Mono<Set<String>> services() {
		if (this.discovery == null) {
			return Mono.just(Set.of());
		}
		return this.discovery.getServices().collect(Collectors.toSet());
	}

}
