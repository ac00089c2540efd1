package dev.gatewaylb.gateway.discovery;

import java.util.List;
import java.util.Set;

import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Where a service's instances come from, and whether gateway-lb balances it at all.
 * Called off the event loops, on gateway-lb's control thread.
 */
public interface InstanceSource {

	/**
	 * Returns whether gateway-lb balances the service: false when the application
	 * declares its own balancer for it.
	 * @param serviceId the service id
	 * @return whether balanced here
	 */
	boolean balancesHere(String serviceId);

	/**
	 * Returns the service's instances as discovery reports them now.
	 * @param serviceId the service id
	 * @return the instances, in any order
	 */
	Mono<List<ServiceInstance>> instances(String serviceId);

	/**
	 * Returns the ids of every service discovery knows, as
	 * {@code DiscoveryClient.getServices()} lists them: with the ids that routes, the
	 * configuration and splits name, the only services a request may name (any other id
	 * is answered 503 without being tracked). Asked once per discovery poll.
	 * @return the ids, in any spelling; none by default
	 */
	default Mono<Set<String>> services() {
		return Mono.just(Set.of());
	}

}
