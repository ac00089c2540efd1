package dev.gatewaylb.gateway.discovery;

import dev.gatewaylb.balance.Endpoint;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Response;

/**
 * One discovered instance of a service, with what a request needs of it worked out once
 * when discovery reports it: its balancing identity, its URL parts, and the Spring Cloud
 * LoadBalancer response that names it (the gateway's
 * {@code GATEWAY_LOADBALANCER_RESPONSE_ATTR}), so a pick allocates none of them.
 *
 * @param instance the discovered instance
 * @param endpoint its address and weight
 * @param host its host, without IPv6 brackets
 * @param port its port
 * @param secure whether it speaks TLS ({@code https})
 * @param response the response naming it
 */
public record Member(ServiceInstance instance, Endpoint endpoint, String host, int port, boolean secure,
		Response<ServiceInstance> response) {

	/**
	 * Describes an instance.
	 * @param instance the instance
	 * @param weight its weight, already read from its metadata
	 * @return the member
	 */
	public static Member of(ServiceInstance instance, int weight) {
		String host = instance.getHost();
		if (host.startsWith("[") && host.endsWith("]")) {
			host = host.substring(1, host.length() - 1);
		}
		return new Member(instance, Endpoint.of(host, instance.getPort(), weight), host, instance.getPort(),
				instance.isSecure(), new DefaultResponse(instance));
	}

	/**
	 * Returns whether this member is the same to the balancer and the router as
	 * {@code other}: same address, weight and scheme. Other metadata may differ.
	 * @param other another member
	 * @return whether the same
	 */
	public boolean sameAs(Member other) {
		return this.endpoint.equals(other.endpoint) && this.secure == other.secure;
	}

}
