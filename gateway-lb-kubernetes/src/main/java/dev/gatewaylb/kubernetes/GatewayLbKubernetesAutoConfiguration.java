package dev.gatewaylb.kubernetes;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.gatewaylb.autoconfigure.GatewayLbAutoConfiguration;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.internal.discovery.LoadBalancerInstanceSource;
import dev.gatewaylb.internal.runtime.ServiceBalancer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Kubernetes discovery for gateway-lb, with {@code gateway.lb.kubernetes.enabled}: the
 * services' instances come from EndpointSlices, watched, in place of Spring Cloud
 * discovery's (gateway-lb's own source backs off).
 * <p>
 * The client is the application's {@link KubernetesClient} bean when there is one (Spring
 * Cloud Kubernetes' fabric8 module defines one), else one built from fabric8's standard
 * configuration (the pod's service account in a cluster, {@code KUBERNETES_MASTER} /
 * {@code kubernetes.master}, a kubeconfig), closed with the context.
 */
@AutoConfiguration(before = GatewayLbAutoConfiguration.class)
@ConditionalOnBooleanProperty("gateway.lb.kubernetes.enabled")
@EnableConfigurationProperties(KubernetesDiscoveryProperties.class)
public class GatewayLbKubernetesAutoConfiguration {

	@Bean(destroyMethod = "close")
	KubernetesInstanceSource gatewayLbKubernetesInstanceSource(KubernetesDiscoveryProperties properties,
			ObjectProvider<KubernetesClient> clients, ObjectProvider<LoadBalancerClientFactory> clientFactory,
			ObjectProvider<MeterRegistry> meters, Environment environment) {
		KubernetesClient application = clients.getIfAvailable();
		KubernetesClient client = (application != null) ? application : new KubernetesClientBuilder().build();
		String namespace = namespace(properties.namespace(), client.getNamespace());
		InstanceSource balancing = new LoadBalancerInstanceSource(clientFactory.getObject(), ServiceBalancer.class,
				null);
		KubernetesInstanceSource source = new KubernetesInstanceSource(client, namespace,
				targets(environment, namespace), properties.initialSyncTimeout(), balancing, meters.getIfAvailable());
		if (application == null) {
			source.ownClient();
		}
		source.start();
		try {
			source.checkPorts(serviceIds(environment));
		}
		catch (RuntimeException ex) {
			source.close();
			throw ex;
		}
		return source;
	}

	private static String namespace(@Nullable String configured, @Nullable String clients) {
		if (configured != null) {
			return configured;
		}
		return (clients != null && !clients.isBlank()) ? clients : "default";
	}

	/**
	 * Returns the ids configured under {@code gateway.lb.services}, whatever their keys.
	 */
	static java.util.Set<String> serviceIds(Environment environment) {
		// Values as nested maps: a block with no kubernetes key still names its id.
		return Binder.get(environment)
			.bind("gateway.lb.services", Bindable.mapOf(String.class, Object.class))
			.map(Map::keySet)
			.orElse(java.util.Set.of());
	}

	/**
	 * Reads the services whose block names a Service, namespace or port of its own
	 * ({@code gateway.lb.services.<id>.kubernetes}), at start-up.
	 */
	static Map<String, ServiceTarget> targets(Environment environment, String namespace) {
		Map<String, ServiceBlock> services = Binder.get(environment)
			.bind("gateway.lb.services", Bindable.mapOf(String.class, ServiceBlock.class))
			.orElse(Map.of());
		Map<String, ServiceTarget> targets = new LinkedHashMap<>();
		services.forEach((id, block) -> {
			KubernetesServiceProperties kubernetes = block.kubernetes();
			if (kubernetes == null) {
				return;
			}
			String prefix = "gateway.lb.services." + id + ".kubernetes.";
			String service = (kubernetes.service() != null) ? kubernetes.service() : id.toLowerCase(Locale.ROOT);
			if (!ServiceTarget.isLabel(service, 63)) {
				throw new IllegalArgumentException(prefix + "service: '" + service
						+ "' (expected: a Service name, lower-case letters, digits and '-')");
			}
			String serviceNamespace = (kubernetes.namespace() != null) ? kubernetes.namespace() : namespace;
			if (!ServiceTarget.isLabel(serviceNamespace, 63)) {
				throw new IllegalArgumentException(prefix + "namespace: '" + serviceNamespace
						+ "' (expected: a namespace name, lower-case letters, digits and '-')");
			}
			if (kubernetes.port() != null) {
				ServiceTarget.checkPort(prefix + "port", kubernetes.port());
			}
			targets.put(id.toLowerCase(Locale.ROOT), new ServiceTarget(serviceNamespace, service, kubernetes.port()));
		});
		return targets;
	}

	/**
	 * A service's block as far as this module reads it: every other key is gateway-lb's.
	 *
	 * @param kubernetes the service's Kubernetes block, or {@code null}
	 */
	record ServiceBlock(@Nullable KubernetesServiceProperties kubernetes) {

	}

	/**
	 * Where a service's endpoints come from in Kubernetes.
	 *
	 * @param service the Service's name; default: the service id in lower case
	 * @param namespace the Service's namespace; default:
	 * {@code gateway.lb.kubernetes.namespace}
	 * @param port the port's name or number; default: the only port, else the one named
	 * {@code http}
	 */
	record KubernetesServiceProperties(@Nullable String service, @Nullable String namespace, @Nullable String port) {

	}

}
