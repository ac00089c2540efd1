package dev.gatewaylb.gateway;

import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * Spring Cloud LoadBalancer's view of one service's gateway-lb balancer: the bean the
 * gateway's load-balancer filter asks for {@code lb://<id>}.
 * <p>
 * It takes the instances from the service's {@link ServiceInstanceListSupplier} chain
 * (discovery and its cache, or whatever the user configured) and leaves the choice to the
 * {@link BalancerRegistry}, which outlives this child-context bean's configuration. The
 * supplier should offer the service's whole instance list: a supplier that filters per
 * request makes every request look like a membership change.
 */
public final class ServiceBalancer implements ReactorServiceInstanceLoadBalancer {

	private final String serviceId;

	private final ObjectProvider<ServiceInstanceListSupplier> suppliers;

	private final BalancerRegistry registry;

	/**
	 * The supplier, resolved at the first request: child-context beans do not change, and
	 * a lookup per request costs more than the pick.
	 */
	private volatile @Nullable ServiceInstanceListSupplier supplier;

	/**
	 * Creates the balancer of one service.
	 * @param serviceId the service id
	 * @param suppliers the service's instance list supplier
	 * @param registry the registry holding every service's state
	 */
	public ServiceBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> suppliers,
			BalancerRegistry registry) {
		this.serviceId = serviceId;
		this.suppliers = suppliers;
		this.registry = registry;
	}

	@Override
	@SuppressWarnings("rawtypes")
	public Mono<Response<ServiceInstance>> choose(Request request) {
		ServiceInstanceListSupplier supplier = this.supplier;
		if (supplier == null) {
			supplier = this.suppliers.getIfAvailable(() -> new NoopServiceInstanceListSupplier());
			this.supplier = supplier;
		}
		ServiceInstanceListSupplier resolved = supplier;
		return resolved.get(request).next().map((instances) -> choose(resolved, instances, request));
	}

	@SuppressWarnings("rawtypes")
	private Response<ServiceInstance> choose(ServiceInstanceListSupplier supplier, List<ServiceInstance> instances,
			Request request) {
		if (instances.isEmpty()) {
			return new EmptyResponse();
		}
		Response<ServiceInstance> response = this.registry.choose(this.serviceId, instances, requestData(request));
		if (response.hasServer() && supplier instanceof SelectedInstanceCallback callback) {
			callback.selectedServiceInstance(response.getServer());
		}
		return response;
	}

	@SuppressWarnings("rawtypes")
	private static org.springframework.cloud.client.loadbalancer.@Nullable RequestData requestData(Request request) {
		return (request.getContext() instanceof RequestDataContext context) ? context.getClientRequest() : null;
	}

}
