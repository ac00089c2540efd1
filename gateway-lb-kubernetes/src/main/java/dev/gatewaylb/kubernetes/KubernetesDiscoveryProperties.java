package dev.gatewaylb.kubernetes;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Kubernetes discovery: every service's endpoints from the EndpointSlices of the Service
 * of the same name, watched as they change.
 *
 * @param enabled Whether gateway-lb takes its services' endpoints from Kubernetes
 * EndpointSlices instead of Spring Cloud discovery.
 * @param namespace Namespace of the Services; default: the client's (the pod's own, in a
 * cluster).
 * @param initialSyncTimeout Longest a service waits at start-up for the first listing of
 * the slices before it serves what it has; 0s to 5m.
 */
@ConfigurationProperties("gateway.lb.kubernetes")
public record KubernetesDiscoveryProperties(@DefaultValue("false") boolean enabled, @Nullable String namespace,
		@DefaultValue("10s") Duration initialSyncTimeout) {

	/**
	 * The longest {@code initial-sync-timeout}.
	 */
	static final Duration MAX_INITIAL_SYNC_TIMEOUT = Duration.ofMinutes(5);

	public KubernetesDiscoveryProperties {
		if (initialSyncTimeout.isNegative() || initialSyncTimeout.compareTo(MAX_INITIAL_SYNC_TIMEOUT) > 0) {
			throw new IllegalArgumentException("gateway.lb.kubernetes.initial-sync-timeout: " + initialSyncTimeout
					+ " (expected: 0s to " + MAX_INITIAL_SYNC_TIMEOUT + ")");
		}
		if (namespace != null && !ServiceTarget.isLabel(namespace, 63)) {
			throw new IllegalArgumentException("gateway.lb.kubernetes.namespace: '" + namespace
					+ "' (expected: a namespace name, lower-case letters, digits and '-')");
		}
	}

}
