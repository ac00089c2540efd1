package dev.gatewaylb.kubernetes;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.micrometer.core.instrument.MeterRegistry;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real gateway whose endpoints come from EndpointSlices on fabric8's mock API server
 * (CRUD mode, real sockets): slices created, changed and deleted while requests flow;
 * zones into localities; a terminating pod drained, its request in flight finished;
 * slices merged, a dual-stack pod listed once; bad data counted; the API server gone and
 * back.
 */
@SpringBootTest(classes = KubernetesDiscoveryIT.Gateway.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gateway.lb.kubernetes.enabled=true", "gateway.lb.kubernetes.namespace=test",
				"gateway.lb.kubernetes.initial-sync-timeout=5s",
				"management.endpoints.web.exposure.include=health,gatewaylb",
				"management.endpoint.health.show-details=always",
				"spring.cloud.gateway.server.webflux.routes[0].id=shop",
				"spring.cloud.gateway.server.webflux.routes[0].uri=lb://shop",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/shop/**",
				"spring.cloud.gateway.server.webflux.routes[0].filters[0]=StripPrefix=1",
				"spring.cloud.gateway.server.webflux.routes[1].id=cart",
				"spring.cloud.gateway.server.webflux.routes[1].uri=lb://cart",
				"spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/cart/**",
				"spring.cloud.gateway.server.webflux.routes[1].filters[0]=StripPrefix=1",
				"spring.cloud.gateway.server.webflux.routes[2].id=bad",
				"spring.cloud.gateway.server.webflux.routes[2].uri=lb://bad",
				"spring.cloud.gateway.server.webflux.routes[2].predicates[0]=Path=/bad/**",
				"spring.cloud.gateway.server.webflux.routes[2].filters[0]=StripPrefix=1",
				// A service id of its own mapped to the Service "shop-v2" on its port
				// "web".
				"gateway.lb.services.renamed.kubernetes.service=shop-v2",
				"gateway.lb.services.renamed.kubernetes.port=web",
				"spring.cloud.gateway.server.webflux.routes[3].id=renamed",
				"spring.cloud.gateway.server.webflux.routes[3].uri=lb://renamed",
				"spring.cloud.gateway.server.webflux.routes[3].predicates[0]=Path=/renamed/**",
				"spring.cloud.gateway.server.webflux.routes[3].filters[0]=StripPrefix=1",
				"spring.cloud.gateway.server.webflux.routes[4].id=big",
				"spring.cloud.gateway.server.webflux.routes[4].uri=lb://big",
				"spring.cloud.gateway.server.webflux.routes[4].predicates[0]=Path=/big/**",
				"spring.cloud.gateway.server.webflux.routes[4].filters[0]=StripPrefix=1",
				"spring.cloud.gateway.server.webflux.routes[5].id=roll",
				"spring.cloud.gateway.server.webflux.routes[5].uri=lb://roll",
				"spring.cloud.gateway.server.webflux.routes[5].predicates[0]=Path=/roll/**",
				"spring.cloud.gateway.server.webflux.routes[5].filters[0]=StripPrefix=1" })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubernetesDiscoveryIT {

	private static final String NAMESPACE = "test";

	private static final KubernetesCrudDispatcher STORE = new KubernetesCrudDispatcher();

	private static KubernetesMockServer apiServer = apiServer(0);

	private static final KubernetesClient CLIENT = apiServer.createClient();

	private static final SliceBackend[] PODS = SliceBackend.start("pod", 6, 0);

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	int port;

	@Autowired
	ServiceRuntimes runtimes;

	@Autowired
	MeterRegistry meters;

	@Autowired
	KubernetesInstanceSource source;

	@AfterAll
	static void stop() {
		for (SliceBackend pod : PODS) {
			pod.close();
		}
		apiServer.destroy();
	}

	@Test
	@Order(1)
	void membersFollowTheSlicesAsTheyAreCreatedChangedAndDeleted() {
		apply(slice("shop-1", "shop", "IPv4", List.of(port("http")), ready(0, "zone-a"), ready(1, "zone-a")));
		awaitEndpoints("shop", PODS[0], PODS[1]);
		assertThat(served("/shop/", 20)).containsExactlyInAnyOrder("pod-1", "pod-2");

		// A second slice of the same Service: merged.
		apply(slice("shop-2", "shop", "IPv4", List.of(port("http")), ready(2, "zone-b")));
		awaitEndpoints("shop", PODS[0], PODS[1], PODS[2]);
		assertThat(served("/shop/", 30)).containsExactlyInAnyOrder("pod-1", "pod-2", "pod-3");

		// A pod leaves its slice, then the whole first slice goes.
		apply(slice("shop-1", "shop", "IPv4", List.of(port("http")), ready(0, "zone-a")));
		awaitEndpoints("shop", PODS[0], PODS[2]);
		delete("shop-1");
		awaitEndpoints("shop", PODS[2]);
		assertThat(served("/shop/", 10)).containsExactly("pod-3");
	}

	@Test
	@Order(2)
	void theSlicesZoneIsTheEndpointsZoneAndItsNodeItsMetadata() {
		apply(slice("shop-1", "shop", "IPv4", List.of(port("http")), ready(0, "zone-a")));
		awaitEndpoints("shop", PODS[0], PODS[2]);
		Snapshot<Member> snapshot = runtime("shop").snapshot();
		for (int i = 0; i < snapshot.size(); i++) {
			String address = snapshot.endpoint(i).address();
			assertThat(snapshot.endpoint(i).zone()).as(address)
				.isEqualTo(address.startsWith(PODS[0].address() + ":") ? "zone-a" : "zone-b");
			assertThat(snapshot.value(i).instance().getMetadata()).as(address)
				.containsEntry("nodeName", "node-" + address.substring(0, address.indexOf(':')))
				.containsEntry("namespace", NAMESPACE);
		}
	}

	@Test
	@Order(3)
	void aTerminatingPodThatStillServesFinishesItsRequestAndTakesNoNewOnes() throws Exception {
		apply(slice("cart-1", "cart", "IPv4", List.of(port("http")), ready(3, "zone-a")));
		awaitEndpoints("cart", PODS[3]);
		CompletableFuture<HttpResponse<String>> slow = HTTP.sendAsync(get("/cart/?delay=1500"),
				HttpResponse.BodyHandlers.ofString());
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> PODS[3].active() == 1);

		// A rolling restart: the old pod terminating but still serving, a new one ready.
		apply(slice("cart-1", "cart", "IPv4", List.of(port("http")), terminating(3, true), ready(4, "zone-a")));
		awaitEndpoints("cart", PODS[3], PODS[4]);
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> isDraining("cart", PODS[3]));
		assertThat(served("/cart/", 20)).as("no new request for the terminating pod").containsExactly("pod-5");
		HttpResponse<String> finished = slow.get();
		assertThat(finished.statusCode()).isEqualTo(200);
		assertThat(finished.body()).as("its request in flight finished there").isEqualTo("pod-4");

		// It stops serving: it leaves.
		apply(slice("cart-1", "cart", "IPv4", List.of(port("http")), terminating(3, false), ready(4, "zone-a")));
		awaitEndpoints("cart", PODS[4]);
	}

	@Test
	@Order(4)
	void aDualStackPodIsOneEndpointAndAServiceOfAnotherNameTakesItsPortByName() {
		EndpointPort web = new EndpointPortBuilder().withName("web").withPort(PODS[0].port()).build();
		EndpointPort metrics = new EndpointPortBuilder().withName("metrics").withPort(1).build();
		apply(slice("shop-v2-v4", "shop-v2", "IPv4", List.of(metrics, web), ready(5, "zone-a")));
		apply(slice("shop-v2-v6", "shop-v2", "IPv6", List.of(metrics, web),
				new EndpointBuilder().withAddresses("::1")
					.withNewTargetRef()
					.withKind("Pod")
					.withName("pod-6")
					.withUid("uid-6")
					.endTargetRef()
					.build()));
		awaitEndpoints("renamed", PODS[5]);
		assertThat(served("/renamed/", 5)).containsExactly("pod-6");
	}

	@Test
	@Order(5)
	void badDataIsSkippedAndCountedAndTheRestServed() {
		apply(slice("bad-1", "bad", "IPv4", List.of(port("http")), ready(0, "zone-a"),
				new EndpointBuilder().withAddresses(List.of()).build()));
		// Two ports and none named http: no port to balance on.
		apply(slice("bad-2", "bad", "IPv4", List.of(new EndpointPortBuilder().withName("grpc").withPort(9000).build(),
				new EndpointPortBuilder().withName("admin").withPort(9001).build()), ready(1, "zone-a")));
		// A slice of no Service.
		EndpointSlice unlabelled = slice("orphan", "bad", "IPv4", List.of(port("http")), ready(2, "zone-a"));
		unlabelled.getMetadata().setLabels(java.util.Map.of());
		apply(unlabelled);
		awaitEndpoints("bad", PODS[0]);
		Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(rejected("bad", "no-addresses")).isGreaterThanOrEqualTo(1);
			assertThat(rejected("bad", "unknown-port")).isGreaterThanOrEqualTo(1);
			assertThat(rejected("", "no-service-label")).isEqualTo(1);
		});
		assertThat(served("/bad/", 5)).containsExactly("pod-1");
	}

	@Test
	@Order(6)
	void theApiServerGoneKeepsTheEndpointsAndAChangeAfterItsReturnIsApplied() throws Exception {
		awaitEndpoints("shop", PODS[0], PODS[2]);
		int apiPort = apiServer.getPort();
		apiServer.destroy();
		Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !this.source.status().inSync());
		// Nothing is lost while it is away: 30 s of requests, every one answered by the
		// endpoints it had.
		Set<String> served = new HashSet<>();
		long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		int requests = 0;
		while (System.nanoTime() - until < 0) {
			served.addAll(served("/shop/", 10));
			requests += 10;
		}
		assertThat(served).as("%d requests with the API server away", requests)
			.containsExactlyInAnyOrder("pod-1", "pod-3");
		apiServer = apiServer(apiPort);
		// The watch comes back with backoff and relists: a change made now is applied.
		apply(slice("shop-1", "shop", "IPv4", List.of(port("http")), ready(0, "zone-a"), ready(1, "zone-a")));
		Awaitility.await()
			.atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(addresses("shop")).containsExactlyInAnyOrder(address(PODS[0]),
					address(PODS[1]), address(PODS[2])));
		assertThat(served("/shop/", 30)).containsExactlyInAnyOrder("pod-1", "pod-2", "pod-3");
		Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> this.source.status().inSync());
	}

	/**
	 * How long a slice change takes to reach the balancer, from the API server's answer
	 * to the update to the snapshot that has it, over 200 changes; and 1,000 endpoints in
	 * 10 slices. Asserts that every change arrives and that endpoint state is kept;
	 * prints the times (docs/benchmarks.md quotes them: a functional test asserts no
	 * time).
	 */
	@Test
	@Order(7)
	void measuresHowFastAChangeReachesTheBalancer() {
		// 1,000 endpoints on loopback addresses nothing listens on, in 10 slices.
		List<Endpoint> all = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			all.add(new EndpointBuilder().withAddresses("127.1." + (i / 250) + "." + (i % 250 + 1))
				.withNewTargetRef()
				.withKind("Pod")
				.withName("big-" + i)
				.withUid("big-uid-" + i)
				.endTargetRef()
				.build());
		}
		// The route's first request makes the gateway track the service, before the
		// slices.
		send("/big/");
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.runtimes.find("big") != null);
		long created = System.nanoTime();
		for (int s = 0; s < 10; s++) {
			apply(slice("big-" + s, "big", "IPv4", List.of(port("http")),
					all.subList(s * 100, s * 100 + 100).toArray(Endpoint[]::new)));
		}
		long lastCreated = System.nanoTime();
		Awaitility.await()
			.atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(1))
			.until(() -> addresses("big").size() == 1000);
		long done = System.nanoTime();
		long applied = done - created;
		long afterLast = done - lastCreated;
		Snapshot<Member> before = runtime("big").snapshot();
		var kept = before.state(0);
		String keptAddress = before.endpoint(0).address();

		// 200 changes, one at a time: an endpoint joins slice 9, or leaves it again.
		List<Long> delays = new ArrayList<>();
		for (int change = 0; change < 200; change++) {
			List<Endpoint> ninth = new ArrayList<>(all.subList(900, 1000));
			boolean join = change % 2 == 0;
			if (join) {
				ninth.add(new EndpointBuilder().withAddresses("127.2.0." + (change / 2 % 250 + 1)).build());
			}
			int expected = join ? 1001 : 1000;
			long sent = System.nanoTime();
			apply(slice("big-9", "big", "IPv4", List.of(port("http")), ninth.toArray(Endpoint[]::new)));
			long answered = System.nanoTime();
			Awaitility.await()
				.atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofNanos(200_000))
				.until(() -> addresses("big").size() == expected);
			delays.add(Math.max(0, System.nanoTime() - Math.max(sent, answered)));
		}
		Snapshot<Member> after = runtime("big").snapshot();
		for (int i = 0; i < after.size(); i++) {
			if (after.endpoint(i).address().equals(keptAddress)) {
				assertThat(after.state(i)).as("an endpoint that stays keeps its state").isSameAs(kept);
			}
		}
		delays.sort(null);
		System.out.printf("1,000 endpoints in 10 slices applied %.1f ms after the first create, %.1f ms after the"
				+ " last; 200 changes reached the balancer: p50 %.1f ms, p99 %.1f ms, max %.1f ms after the API server's answer%n",
				applied / 1e6, afterLast / 1e6, delays.get(99) / 1e6, delays.get(197) / 1e6, delays.get(199) / 1e6);
	}

	@Test
	@Order(8)
	void aRollingRestartUnderLoadGivesTheClientsNoError() throws Exception {
		// Three old pods, replaced one by one: the new one ready, the old one terminating
		// and serving, then gone, as the Deployment controller and the kubelet walk them.
		List<Endpoint> endpoints = new ArrayList<>(List.of(ready(0, "zone-a"), ready(1, "zone-a"), ready(2, "zone-a")));
		apply(slice("roll-1", "roll", "IPv4", List.of(port("http")), endpoints.toArray(Endpoint[]::new)));
		awaitEndpoints("roll", PODS[0], PODS[1], PODS[2]);
		java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
		java.util.concurrent.atomic.AtomicInteger answered = new java.util.concurrent.atomic.AtomicInteger();
		List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
		List<Thread> clients = new ArrayList<>();
		for (int c = 0; c < 4; c++) {
			Thread client = new Thread(() -> {
				while (running.get()) {
					try {
						HttpResponse<String> response = HTTP.send(get("/roll/?delay=20"),
								HttpResponse.BodyHandlers.ofString());
						if (response.statusCode() != 200) {
							failures.add(response.statusCode() + " " + response.body());
						}
						answered.incrementAndGet();
					}
					catch (Exception ex) {
						failures.add(ex.toString());
					}
				}
			});
			client.start();
			clients.add(client);
		}
		try {
			for (int old = 0; old < 3; old++) {
				int next = old + 3;
				endpoints.add(ready(next, "zone-a"));
				endpoints.set(old, terminating(old, true));
				apply(slice("roll-1", "roll", "IPv4", List.of(port("http")), endpoints.toArray(Endpoint[]::new)));
				int drained = old;
				Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> isDraining("roll", PODS[drained]));
				int before = answered.get();
				Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answered.get() >= before + 20);
				endpoints.set(old, terminating(old, false));
				apply(slice("roll-1", "roll", "IPv4", List.of(port("http")), endpoints.toArray(Endpoint[]::new)));
				int after = answered.get();
				Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answered.get() >= after + 20);
			}
		}
		finally {
			running.set(false);
			for (Thread client : clients) {
				client.join(10_000);
			}
		}
		assertThat(failures).as("what the clients got during the restart").isEmpty();
		awaitEndpoints("roll", PODS[3], PODS[4], PODS[5]);
		assertThat(served("/roll/", 30)).containsExactlyInAnyOrder("pod-4", "pod-5", "pod-6");
	}

	private static KubernetesMockServer apiServer(int port) {
		KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
				STORE, false);
		server.init(java.net.InetAddress.getLoopbackAddress(), port);
		return server;
	}

	private void apply(EndpointSlice slice) {
		EndpointSlice current = CLIENT.discovery()
			.v1()
			.endpointSlices()
			.inNamespace(NAMESPACE)
			.withName(slice.getMetadata().getName())
			.get();
		if (current == null) {
			CLIENT.discovery().v1().endpointSlices().inNamespace(NAMESPACE).resource(slice).create();
		}
		else {
			// An update names the version it replaces, as the API server's controller
			// does.
			slice.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
			CLIENT.discovery().v1().endpointSlices().inNamespace(NAMESPACE).resource(slice).update();
		}
	}

	private void delete(String name) {
		CLIENT.discovery().v1().endpointSlices().inNamespace(NAMESPACE).withName(name).delete();
	}

	private static EndpointSlice slice(String name, String service, String addressType, List<EndpointPort> ports,
			Endpoint... endpoints) {
		return new EndpointSliceBuilder().withNewMetadata()
			.withName(name)
			.withNamespace(NAMESPACE)
			.addToLabels(SliceInstances.SERVICE_LABEL, service)
			.endMetadata()
			.withAddressType(addressType)
			.withPorts(ports)
			.withEndpoints(endpoints)
			.build();
	}

	private static EndpointPort port(String name) {
		return new EndpointPortBuilder().withName(name).withPort(PODS[0].port()).withProtocol("TCP").build();
	}

	private static Endpoint ready(int pod, String zone) {
		return pod(pod).withZone(zone).withNewConditions().withReady(true).withServing(true).endConditions().build();
	}

	private static Endpoint terminating(int pod, boolean serving) {
		return pod(pod).withZone("zone-a")
			.withNewConditions()
			.withReady(false)
			.withServing(serving)
			.withTerminating(true)
			.endConditions()
			.build();
	}

	private static EndpointBuilder pod(int pod) {
		SliceBackend backend = PODS[pod];
		return new EndpointBuilder().withAddresses(backend.address())
			.withNodeName("node-" + backend.address())
			.withNewTargetRef()
			.withKind("Pod")
			.withName(backend.name())
			.withUid("uid-" + (pod + 1))
			.endTargetRef();
	}

	private ServiceRuntime runtime(String service) {
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.runtimes.find(service) != null);
		return this.runtimes.find(service);
	}

	private Set<String> addresses(String service) {
		ServiceRuntime runtime = this.runtimes.find(service);
		Set<String> addresses = new HashSet<>();
		if (runtime != null) {
			runtime.snapshot().endpoints().forEach((endpoint) -> addresses.add(endpoint.address()));
		}
		return addresses;
	}

	private void awaitEndpoints(String service, SliceBackend... expected) {
		Set<String> wanted = new HashSet<>();
		for (SliceBackend backend : expected) {
			wanted.add(address(backend));
		}
		// The route's first request makes the gateway track the service.
		Awaitility.await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			send("/" + service + "/");
			assertThat(addresses(service)).isEqualTo(wanted);
		});
	}

	private boolean isDraining(String service, SliceBackend backend) {
		Snapshot<Member> snapshot = runtime(service).snapshot();
		for (int i = 0; i < snapshot.size(); i++) {
			if (snapshot.endpoint(i).address().equals(address(backend))) {
				return snapshot.isDraining(i);
			}
		}
		return false;
	}

	private static String address(SliceBackend backend) {
		return backend.address() + ":" + backend.port();
	}

	private double rejected(String service, String reason) {
		var counter = this.meters.find("gateway.lb.discovery.rejected")
			.tags("service", service, "reason", reason)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	/**
	 * Sends {@code count} requests one after the other, each expected to be answered 200,
	 * and returns the distinct backends that answered.
	 */
	private Set<String> served(String path, int count) {
		Set<String> backends = new HashSet<>();
		List<String> failures = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			HttpResponse<String> response = send(path);
			if (response.statusCode() == 200) {
				backends.add(response.headers().firstValue("X-Backend").orElse("?"));
			}
			else {
				failures.add(response.statusCode() + " " + response.body());
			}
		}
		assertThat(failures).isEmpty();
		return backends;
	}

	private HttpResponse<String> send(String path) {
		try {
			return HTTP.send(get(path), HttpResponse.BodyHandlers.ofString());
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private HttpRequest get(String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Gateway {

		@Bean
		KubernetesClient kubernetesClient() {
			return CLIENT;
		}

	}

}
