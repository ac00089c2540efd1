package dev.gatewaylb.internal.discovery;

import java.util.Map;

import dev.gatewaylb.internal.balance.Endpoint;
import org.jspecify.annotations.Nullable;

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
	 * The instance metadata key of an instance's zone, as Spring Cloud LoadBalancer and
	 * Eureka spell it.
	 */
	public static final String ZONE_KEY = "zone";

	/**
	 * The Kubernetes topology label of a node's zone, read when {@link #ZONE_KEY} is
	 * absent: a discovery client that copies labels into the metadata hands it over.
	 */
	public static final String KUBERNETES_ZONE_KEY = "topology.kubernetes.io/zone";

	/**
	 * The instance metadata key of an instance's priority level.
	 */
	public static final String PRIORITY_KEY = "priority";

	/**
	 * The instance metadata key that says an instance is going away (a terminating pod
	 * that still serves): {@code true} drains it, its requests in flight and its sessions
	 * finish, and it takes no new picks.
	 */
	public static final String DRAINING_KEY = "gateway.lb.draining";

	/**
	 * Describes an instance without a priority.
	 * @param instance the instance
	 * @param weight its weight, already read from its metadata
	 * @return the member
	 */
	public static Member of(ServiceInstance instance, int weight) {
		return of(instance, weight, Endpoint.NO_PRIORITY);
	}

	/**
	 * Describes an instance; its zone is read from its metadata.
	 * @param instance the instance
	 * @param weight its weight, already read from its metadata
	 * @param priority its priority level, already read from its metadata, or
	 * {@link Endpoint#NO_PRIORITY}
	 * @return the member
	 */
	public static Member of(ServiceInstance instance, int weight, int priority) {
		String host = instance.getHost();
		if (host.startsWith("[") && host.endsWith("]")) {
			host = host.substring(1, host.length() - 1);
		}
		Endpoint endpoint = Endpoint.of(host, instance.getPort(), weight).at(zone(instance), priority);
		return new Member(instance, endpoint, host, instance.getPort(), instance.isSecure(),
				new DefaultResponse(instance));
	}

	/**
	 * Returns an instance's zone from its metadata, or {@code null}.
	 * @param instance the instance
	 * @return the zone, trimmed, or {@code null} when the metadata names none
	 */
	public static @Nullable String zone(ServiceInstance instance) {
		Map<String, String> metadata = instance.getMetadata();
		if (metadata == null) {
			return null;
		}
		String zone = metadata.get(ZONE_KEY);
		if (zone == null || zone.isBlank()) {
			zone = metadata.get(KUBERNETES_ZONE_KEY);
		}
		return (zone == null || zone.isBlank()) ? null : zone.trim();
	}

	/**
	 * Returns whether this member is the same to the balancer and the router as
	 * {@code other}: same address, weight, zone, priority and scheme. Other metadata may
	 * differ.
	 * @param other another member
	 * @return whether the same
	 */
	public boolean sameAs(Member other) {
		return this.endpoint.equals(other.endpoint) && this.secure == other.secure && draining() == other.draining();
	}

	/**
	 * Returns whether discovery says the instance is going away: its metadata
	 * {@link #DRAINING_KEY} is {@code true}.
	 * @return whether it drains
	 */
	public boolean draining() {
		Map<String, String> metadata = this.instance.getMetadata();
		return metadata != null && "true".equalsIgnoreCase(metadata.get(DRAINING_KEY));
	}

}
