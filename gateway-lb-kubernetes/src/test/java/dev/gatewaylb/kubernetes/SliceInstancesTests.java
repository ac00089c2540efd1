package dev.gatewaylb.kubernetes;

import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.discovery.Member;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A service's instances from its EndpointSlices, without a server: which endpoints are
 * members, which drain, which are left out; slices merged, dual-stack pods listed once;
 * the port chosen; bad data skipped and counted, the rest kept.
 */
class SliceInstancesTests {

	private static final ServiceTarget SHOP = ServiceTarget.of("shop", "store");

	@Test
	void aReadyEndpointIsAMemberATerminatingServingOneDrainsAndTheOthersAreLeftOut() {
		EndpointSlice slice = slice("shop-a", "IPv4", List.of(port("http", 8080)),
				endpoint("10.0.0.1", "pod-1", true, null, null), endpoint("10.0.0.2", "pod-2", false, true, true),
				endpoint("10.0.0.3", "pod-3", false, false, true), endpoint("10.0.0.4", "pod-4", false, false, false),
				endpoint("10.0.0.5", "pod-5", null, null, null));
		SliceInstances.Result result = SliceInstances.of("shop", SHOP, List.of(slice));
		assertThat(result.instances()).extracting(ServiceInstance::getHost)
			.containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.5");
		assertThat(draining(result)).containsExactly("10.0.0.2");
		assertThat(result.rejected()).isEmpty();
		ServiceInstance first = result.instances().get(0);
		assertThat(first.getPort()).isEqualTo(8080);
		assertThat(first.getInstanceId()).isEqualTo("pod-1");
		assertThat(first.getServiceId()).isEqualTo("shop");
		assertThat(first.getMetadata()).containsEntry(Member.ZONE_KEY, "zone-a")
			.containsEntry("nodeName", "node-pod-1")
			.containsEntry("namespace", "store");
	}

	@Test
	void slicesOfOneServiceAreMergedAndADualStackPodIsOneInstanceAtItsIpv4Address() {
		EndpointSlice v6 = slice("shop-v6", "IPv6", List.of(port("http", 8080)),
				endpoint("fd00::1", "pod-1", true, null, null));
		EndpointSlice v4a = slice("shop-v4a", "IPv4", List.of(port("http", 8080)),
				endpoint("10.0.0.1", "pod-1", true, null, null));
		EndpointSlice v4b = slice("shop-v4b", "IPv4", List.of(port("http", 8080)),
				endpoint("10.0.0.2", "pod-2", true, null, null));
		SliceInstances.Result result = SliceInstances.of("shop", SHOP, List.of(v6, v4b, v4a));
		assertThat(result.instances()).extracting(ServiceInstance::getHost).containsExactly("10.0.0.1", "10.0.0.2");
		assertThat(SliceInstances.of("shop", SHOP, List.of(v6)).instances()).extracting(ServiceInstance::getHost)
			.as("an IPv6-only pod keeps its address")
			.containsExactly("fd00::1");
	}

	@Test
	void thePortIsTheNamedOneElseTheOnlyOneElseTheOneNamedHttp() {
		EndpointSlice two = slice("shop-a", "IPv4", List.of(port("metrics", 9090), port("http", 8080)),
				endpoint("10.0.0.1", "pod-1", true, null, null));
		assertThat(SliceInstances.of("shop", SHOP, List.of(two)).instances().get(0).getPort()).isEqualTo(8080);
		assertThat(SliceInstances.of("shop", new ServiceTarget("store", "shop", "metrics"), List.of(two))
			.instances()
			.get(0)
			.getPort()).isEqualTo(9090);
		assertThat(SliceInstances.of("shop", new ServiceTarget("store", "shop", "9090"), List.of(two))
			.instances()
			.get(0)
			.getPort()).isEqualTo(9090);
		EndpointSlice one = slice("shop-b", "IPv4", List.of(port("web", 8443)),
				endpoint("10.0.0.2", "pod-2", true, null, null));
		assertThat(SliceInstances.of("shop", SHOP, List.of(one)).instances().get(0).getPort()).isEqualTo(8443);
	}

	@Test
	void severalPortsAndNoneNamedHttpNameTheKeyToSet() {
		EndpointSlice slice = slice("shop-a", "IPv4", List.of(port("grpc", 9000), port("admin", 9001)),
				endpoint("10.0.0.1", "pod-1", true, null, null), endpoint("10.0.0.2", "pod-2", true, null, null));
		SliceInstances.Result result = SliceInstances.of("shop", SHOP, List.of(slice));
		assertThat(result.instances()).isEmpty();
		assertThat(result.rejected()).containsEntry(SliceInstances.Rejection.UNKNOWN_PORT, 2);
		assertThat(result.portProblem()).contains("gateway.lb.services.shop.kubernetes.port")
			.contains("store/shop")
			.contains("grpc/9000");
	}

	@Test
	void badEndpointsAreSkippedAndCountedAndTheRestApplied() {
		EndpointSlice good = slice("shop-a", "IPv4", List.of(port("http", 8080)),
				endpoint("10.0.0.1", "pod-1", true, null, null),
				new EndpointBuilder().withAddresses(List.of()).build());
		EndpointSlice outOfRange = slice("shop-b", "IPv4", List.of(port("http", 70000)),
				endpoint("10.0.0.2", "pod-2", true, null, null));
		EndpointSlice unknownPort = slice("shop-c", "IPv4", List.of(port("web", 8080)),
				endpoint("10.0.0.3", "pod-3", true, null, null));
		SliceInstances.Result result = SliceInstances.of("shop", new ServiceTarget("store", "shop", "http"),
				List.of(good, outOfRange, unknownPort));
		assertThat(result.instances()).extracting(ServiceInstance::getHost).containsExactly("10.0.0.1");
		assertThat(result.rejected()).isEqualTo(Map.of(SliceInstances.Rejection.NO_ADDRESSES, 1,
				SliceInstances.Rejection.INVALID_PORT, 1, SliceInstances.Rejection.UNKNOWN_PORT, 1));
	}

	@Test
	void portsAndNamesAreCheckedAsWritten() {
		ServiceTarget.checkPort("k", "8080");
		ServiceTarget.checkPort("k", "http");
		for (String bad : List.of("0", "65536", "8080x", "Http", "-web", "a-very-long-port-name")) {
			org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
				.isThrownBy(() -> ServiceTarget.checkPort("gateway.lb.services.shop.kubernetes.port", bad))
				.withMessageStartingWith("gateway.lb.services.shop.kubernetes.port: '" + bad + "'");
		}
	}

	private static List<String> draining(SliceInstances.Result result) {
		return result.instances()
			.stream()
			.filter((instance) -> "true".equals(instance.getMetadata().get(Member.DRAINING_KEY)))
			.map(ServiceInstance::getHost)
			.toList();
	}

	static EndpointSlice slice(String name, String addressType, List<EndpointPort> ports, Endpoint... endpoints) {
		return new EndpointSliceBuilder().withNewMetadata()
			.withName(name)
			.withNamespace("store")
			.addToLabels(SliceInstances.SERVICE_LABEL, "shop")
			.endMetadata()
			.withAddressType(addressType)
			.withPorts(ports)
			.withEndpoints(endpoints)
			.build();
	}

	static EndpointPort port(String name, int number) {
		return new EndpointPortBuilder().withName(name).withPort(number).withProtocol("TCP").build();
	}

	static Endpoint endpoint(String address, String pod, @Nullable Boolean ready, @Nullable Boolean serving,
			@Nullable Boolean terminating) {
		EndpointBuilder endpoint = new EndpointBuilder().withAddresses(address)
			.withZone("zone-a")
			.withNodeName("node-" + pod)
			.withNewTargetRef()
			.withKind("Pod")
			.withName(pod)
			.withUid("uid-" + pod)
			.endTargetRef();
		if (ready != null || serving != null || terminating != null) {
			endpoint.withNewConditions()
				.withReady(ready)
				.withServing(serving)
				.withTerminating(terminating)
				.endConditions();
		}
		return endpoint.build();
	}

}
