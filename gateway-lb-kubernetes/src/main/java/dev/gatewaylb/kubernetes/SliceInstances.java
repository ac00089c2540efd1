package dev.gatewaylb.kubernetes;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.gatewaylb.internal.discovery.Member;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

/**
 * The instances of one service, worked out from the EndpointSlices of its Kubernetes
 * Service: plain Java over the API's model, tested without a server.
 * <p>
 * An endpoint whose {@code conditions.ready} holds (or is unset, which the API says to
 * read as ready) and that is not terminating is an instance; one that is terminating and
 * still {@code serving} is an instance marked draining ({@link Member#DRAINING_KEY}): its
 * requests in flight and its affinity sessions finish, it takes no new picks; any other
 * is left out. Slices of one Service are merged, and a pod listed in several (the IPv4
 * and the IPv6 slice of a dual-stack Service) is one instance: its IPv4 address, else its
 * IPv6 one, else its name. Bad data (an endpoint without an address, a port the Service
 * does not have, a port out of range) is skipped and counted; the rest is applied.
 */
final class SliceInstances {

	/**
	 * The slice label that names its Service.
	 */
	static final String SERVICE_LABEL = "kubernetes.io/service-name";

	/**
	 * Why an endpoint of a slice is not balanced: the {@code reason} tag of
	 * {@code gateway.lb.discovery.rejected}.
	 */
	enum Rejection {

		/**
		 * The endpoint lists no address.
		 */
		NO_ADDRESSES,

		/**
		 * The slice has no port the service is balanced on: not the one named by
		 * {@code kubernetes.port}, or several and none named {@code http}.
		 */
		UNKNOWN_PORT,

		/**
		 * The chosen port has no number, or one outside 1 to 65535.
		 */
		INVALID_PORT,

		/**
		 * A slice without the {@value #SERVICE_LABEL} label: it belongs to no Service.
		 */
		NO_SERVICE_LABEL;

		String tag() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	/**
	 * What a service's slices give.
	 *
	 * @param instances the instances, sorted by address
	 * @param rejected how many endpoints were skipped, by reason
	 * @param portProblem why no port could be chosen, naming the key to set, or
	 * {@code null}
	 */
	record Result(List<ServiceInstance> instances, Map<Rejection, Integer> rejected, @Nullable String portProblem) {

	}

	private SliceInstances() {
	}

	/**
	 * Works out a service's instances from its slices.
	 * @param serviceId the gateway-lb service id
	 * @param target the Service and port it is balanced on
	 * @param slices the Service's slices, in any order
	 * @return the instances and what was skipped
	 */
	static Result of(String serviceId, ServiceTarget target, Collection<EndpointSlice> slices) {
		List<EndpointSlice> ordered = new ArrayList<>(slices);
		// IPv4 slices first, then IPv6, then FQDN; by name within a family: a pod in two
		// slices is listed by the same address at every change.
		ordered.sort(Comparator.comparingInt(SliceInstances::familyOrder)
			.thenComparing((slice) -> String.valueOf(slice.getMetadata().getName())));
		Map<String, ServiceInstance> byPod = new LinkedHashMap<>();
		Map<Rejection, Integer> rejected = new EnumMap<>(Rejection.class);
		String portProblem = null;
		for (EndpointSlice slice : ordered) {
			List<Endpoint> endpoints = (slice.getEndpoints() != null) ? slice.getEndpoints() : List.of();
			if (endpoints.isEmpty()) {
				continue;
			}
			PortChoice choice = port(serviceId, target, slice.getPorts());
			if (choice.rejection != null) {
				rejected.merge(choice.rejection, endpoints.size(), Integer::sum);
				if (choice.problem != null) {
					portProblem = choice.problem;
				}
				continue;
			}
			for (Endpoint endpoint : endpoints) {
				List<String> addresses = endpoint.getAddresses();
				if (addresses == null || addresses.isEmpty() || addresses.get(0) == null
						|| addresses.get(0).isBlank()) {
					rejected.merge(Rejection.NO_ADDRESSES, 1, Integer::sum);
					continue;
				}
				EndpointConditions conditions = endpoint.getConditions();
				boolean terminating = conditions != null && Boolean.TRUE.equals(conditions.getTerminating());
				// Unset reads as ready, as the API documents; serving, unset, as ready.
				boolean ready = conditions == null || !Boolean.FALSE.equals(conditions.getReady());
				boolean serving = (conditions == null || conditions.getServing() == null) ? ready
						: conditions.getServing();
				if (terminating ? !serving : !ready) {
					continue;
				}
				// The API server lists at most one address per endpoint that matters:
				// consumers take the first.
				String address = addresses.get(0);
				String pod = podKey(endpoint, address);
				if (byPod.containsKey(pod)) {
					continue;
				}
				byPod.put(pod, instance(serviceId, target, endpoint, address, choice, terminating));
			}
		}
		List<ServiceInstance> instances = new ArrayList<>(byPod.values());
		instances.sort(Comparator.comparing(ServiceInstance::getHost).thenComparingInt(ServiceInstance::getPort));
		return new Result(List.copyOf(instances), rejected, portProblem);
	}

	private static ServiceInstance instance(String serviceId, ServiceTarget target, Endpoint endpoint, String address,
			PortChoice choice, boolean terminating) {
		Map<String, String> metadata = new LinkedHashMap<>();
		if (endpoint.getZone() != null && !endpoint.getZone().isBlank()) {
			metadata.put(Member.ZONE_KEY, endpoint.getZone());
		}
		if (endpoint.getNodeName() != null) {
			metadata.put("nodeName", endpoint.getNodeName());
		}
		metadata.put("namespace", target.namespace());
		ObjectReference pod = endpoint.getTargetRef();
		if (pod != null && pod.getName() != null) {
			metadata.put("pod", pod.getName());
		}
		if (terminating) {
			metadata.put(Member.DRAINING_KEY, "true");
		}
		String instanceId = (pod != null && pod.getName() != null) ? pod.getName() : address;
		return new DefaultServiceInstance(instanceId, serviceId, address, choice.number, choice.secure, metadata);
	}

	/**
	 * Returns what tells one pod from another: its uid, else its name, else the address.
	 */
	private static String podKey(Endpoint endpoint, String address) {
		ObjectReference pod = endpoint.getTargetRef();
		if (pod != null && pod.getUid() != null) {
			return "uid:" + pod.getUid();
		}
		if (pod != null && pod.getName() != null) {
			return "name:" + pod.getName();
		}
		return "address:" + address;
	}

	private static int familyOrder(EndpointSlice slice) {
		String type = slice.getAddressType();
		if ("IPv4".equals(type)) {
			return 0;
		}
		return "IPv6".equals(type) ? 1 : 2;
	}

	/**
	 * Chooses the slice's port: the one {@code kubernetes.port} names (by number or by
	 * name), else the only one, else the one named
	 * {@value ServiceTarget#DEFAULT_PORT_NAME}.
	 */
	private static PortChoice port(String serviceId, ServiceTarget target, @Nullable List<EndpointPort> ports) {
		List<EndpointPort> listed = (ports != null) ? ports : List.of();
		EndpointPort chosen = null;
		String named = target.port();
		if (named != null) {
			int number = target.portNumber();
			for (EndpointPort port : listed) {
				if ((number > 0) ? Integer.valueOf(number).equals(port.getPort()) : named.equals(port.getName())) {
					chosen = port;
					break;
				}
			}
			if (chosen == null) {
				return PortChoice.rejected(Rejection.UNKNOWN_PORT, null);
			}
		}
		else if (listed.size() == 1) {
			chosen = listed.get(0);
		}
		else {
			for (EndpointPort port : listed) {
				if (ServiceTarget.DEFAULT_PORT_NAME.equals(port.getName())) {
					chosen = port;
				}
			}
			if (chosen == null) {
				List<String> names = listed.stream().map((port) -> port.getName() + "/" + port.getPort()).toList();
				return PortChoice.rejected(Rejection.UNKNOWN_PORT,
						"Service " + target.namespace() + "/" + target.service() + " has "
								+ (names.isEmpty() ? "no port" : "ports " + names + " and none named http")
								+ ": set gateway.lb.services." + serviceId + ".kubernetes.port");
			}
		}
		Integer number = chosen.getPort();
		if (number == null || number < 1 || number > 65535) {
			return PortChoice.rejected(Rejection.INVALID_PORT, null);
		}
		boolean secure = "https".equals(chosen.getName()) || "https".equalsIgnoreCase(chosen.getAppProtocol());
		return new PortChoice(number, secure, null, null);
	}

	/**
	 * The port a slice's endpoints are balanced on, or why none.
	 */
	private record PortChoice(int number, boolean secure, @Nullable Rejection rejection, @Nullable String problem) {

		static PortChoice rejected(Rejection rejection, @Nullable String problem) {
			return new PortChoice(0, false, rejection, problem);
		}

	}

}
