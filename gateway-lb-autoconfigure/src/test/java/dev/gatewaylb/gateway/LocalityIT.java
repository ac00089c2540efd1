package dev.gatewaylb.gateway;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.runtime.Drain;
import dev.gatewaylb.internal.actuate.GatewayLbEndpoint;
import dev.gatewaylb.actuate.GatewayLbReport;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * Localities on real sockets: a gateway in zone-a in front of endpoints in zone-a and
 * zone-b. Every request stays in the zone while it is healthy; two local endpoints down
 * send 53% of the traffic to the other zone (Envoy's 1.4 overprovisioning) and no error
 * reaches a client; five of six down is panic; a drain weighs as an ejection; load-aware
 * spill leaves a queueing zone; a key keeps its endpoint when another one goes. What the
 * spill does for the tail (p99 against strict zone preference) is a target of the load
 * benchmarks ({@code run.sh locality}, docs/benchmarks.md).
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=gatewaylb,prometheus")
class LocalityIT extends GatewayIntegrationTest {

	static final List<TestBackend> local = List.of(TestBackend.start("a1"), TestBackend.start("a2"),
			TestBackend.start("a3"));

	static final List<TestBackend> remote = List.of(TestBackend.start("b1"), TestBackend.start("b2"),
			TestBackend.start("b3"));

	static final List<WorkerBackend> localWorkers = List.of(WorkerBackend.start("wa1", 1, Duration.ofMillis(10)),
			WorkerBackend.start("wa2", 1, Duration.ofMillis(10)), WorkerBackend.start("wa3", 1, Duration.ofMillis(10)));

	static final List<WorkerBackend> remoteWorkers = List.of(WorkerBackend.start("wb1", 1, Duration.ofMillis(12)),
			WorkerBackend.start("wb2", 1, Duration.ofMillis(12)), WorkerBackend.start("wb3", 1, Duration.ofMillis(12)));

	static final int[] refusing = { freePort(), freePort(), freePort(), freePort(), freePort(), freePort(),
			freePort() };

	@Autowired
	GatewayLbEndpoint endpoint;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry)
			.set("spring.cloud.loadbalancer.zone", "zone-a")
			// At the defaults (load-aware: true) but for the one service that compares
			// strict preference with the load-aware spill.
			.set("gateway.lb.defaults.locality.enabled", true);
		List<String> localUris = local.stream().map(TestBackend::uri).toList();
		List<String> remoteUris = remote.stream().map(TestBackend::uri).toList();
		for (String service : List.of("zones", "drained", "hashed")) {
			gateway.route(service);
			instances(registry, service, localUris, remoteUris);
		}
		gateway.set("gateway.lb.services.hashed.algorithm", "consistent-hash")
			.set("gateway.lb.services.hashed.hash-key", "header:X-Key");
		gateway.route("failover")
			.set("gateway.lb.services.failover.health.passive.consecutive-failures", 1)
			.set("gateway.lb.services.failover.health.passive.base-ejection-time", "10m");
		instances(registry, "failover",
				List.of(local.get(0).uri(), "http://127.0.0.1:" + refusing[0], "http://127.0.0.1:" + refusing[1]),
				remoteUris);
		gateway.route("panic")
			.set("gateway.lb.services.panic.health.passive.consecutive-failures", 1)
			.set("gateway.lb.services.panic.health.passive.base-ejection-time", "10m")
			.set("gateway.lb.services.panic.health.passive.max-ejection-percent", 100)
			.set("gateway.lb.services.panic.retry.attempts", 0);
		instances(registry, "panic",
				List.of("http://127.0.0.1:" + refusing[2], "http://127.0.0.1:" + refusing[3],
						"http://127.0.0.1:" + refusing[4]),
				List.of("http://127.0.0.1:" + refusing[5], "http://127.0.0.1:" + refusing[6], remote.get(2).uri()));
		List<String> localWorkerUris = localWorkers.stream().map(WorkerBackend::uri).toList();
		List<String> remoteWorkerUris = remoteWorkers.stream().map(WorkerBackend::uri).toList();
		for (String service : List.of("aware", "strict")) {
			gateway.route(service).set("gateway.lb.services." + service + ".algorithm", "least-requests");
			instances(registry, service, localWorkerUris, remoteWorkerUris);
		}
		gateway.set("gateway.lb.services.strict.locality.load-aware", false);
	}

	@AfterAll
	static void stopBackends() {
		local.forEach(TestBackend::close);
		remote.forEach(TestBackend::close);
		localWorkers.forEach(WorkerBackend::close);
		remoteWorkers.forEach(WorkerBackend::close);
	}

	@Test
	void withEveryLocalEndpointHealthyNoRequestLeavesTheZone() {
		// Four clients at once, at the defaults (load-aware): more than one request in
		// flight per local endpoint at times, which is no queue.
		Map<String, Integer> backends = new java.util.concurrent.ConcurrentHashMap<>();
		reactor.core.publisher.Flux.range(0, 2_000)
			.flatMap((i) -> this.client.get("/zones/", Map.of()), 4)
			.doOnNext(
					(answer) -> backends.merge((answer.status() == 200) ? answer.backend() : "error", 1, Integer::sum))
			.blockLast(Duration.ofSeconds(120));
		assertThat(backends).containsOnlyKeys("a1", "a2", "a3");
		assertThat(backends.values()).allSatisfy((count) -> assertThat(count).isBetween(600, 734));
		GatewayLbReport.ServiceReport report = report("zones");
		assertThat(report.locality().zone()).isEqualTo("zone-a");
		assertThat(report.locality().panic()).isFalse();
		assertThat(report.locality().levels())
			.extracting(GatewayLbReport.LevelReport::priority, GatewayLbReport.LevelReport::endpoints,
					GatewayLbReport.LevelReport::healthy, GatewayLbReport.LevelReport::share)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(0, 3, 3, 1.0),
					org.assertj.core.groups.Tuple.tuple(1, 3, 3, 0.0));
		assertThat(report.endpoints()).extracting(GatewayLbReport.EndpointReport::zone)
			.containsExactly("zone-a", "zone-a", "zone-a", "zone-b", "zone-b", "zone-b");
		assertThat(metric("gateway_lb_locality_requests_total{priority=\"0\",service=\"zones\"}"))
			.isGreaterThanOrEqualTo(2_000);
	}

	@Test
	void twoLocalEndpointsDownSendTheShareTheOverprovisioningFactorSaysAwayAndNoErrorReachesAClient() {
		// The refusing endpoints are ejected at their first refusal; the retry goes to
		// another endpoint.
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			send("/failover/", 20, Map.of());
			return !isPickable("failover", "127.0.0.1:" + refusing[0])
					&& !isPickable("failover", "127.0.0.1:" + refusing[1]);
		});
		int requests = 2_000;
		// Four clients at once, at the defaults (load-aware): the share holds under a
		// concurrent load too (38% of 2,000 went local at 4393e3a, where the rule says
		// 46.7%: the spill took the queueing the share itself makes for its own).
		Map<String, Integer> backends = new java.util.concurrent.ConcurrentHashMap<>();
		reactor.core.publisher.Flux.range(0, requests)
			.flatMap((i) -> this.client.get("/failover/", Map.of()), 4)
			.doOnNext(
					(answer) -> backends.merge((answer.status() == 200) ? answer.backend() : "error", 1, Integer::sum))
			.blockLast(Duration.ofSeconds(120));
		assertThat(backends.getOrDefault("error", 0)).as("errors").isZero();
		int toLocal = backends.getOrDefault("a1", 0);
		double share = 1.0 / 3 * 1.4;
		double sigma = Math.sqrt(requests * share * (1 - share));
		assertThat((double) toLocal).as("local answers of %s", backends).isCloseTo(requests * share, within(5 * sigma));
		assertThat(backends.keySet()).containsOnly("a1", "b1", "b2", "b3");
		assertThat(report("failover").locality().levels().get(0).share()).isCloseTo(share, within(1e-9));
	}

	@Test
	void fiveOfSixDownIsPanicAndSpreadsRequestsOverAllSix() {
		await().atMost(Duration.ofSeconds(15)).until(() -> {
			send("/panic/", 20, Map.of());
			return report("panic").locality().panic();
		});
		Snapshot<Member> snapshot = this.runtimes.snapshot("panic");
		long[] before = picks(snapshot);
		send("/panic/", 600, Map.of());
		long[] after = picks(snapshot);
		for (int i = 0; i < after.length; i++) {
			assertThat(after[i] - before[i]).as("picks of %s", snapshot.endpoint(i).address()).isBetween(60L, 140L);
		}
		assertThat(report("panic").locality().panic()).isTrue();
	}

	@Test
	void aDrainedLocalEndpointLowersTheLocalShareAsAnEjectedOneDoes() {
		String address = "127.0.0.1:" + local.get(0).port();
		assertThat(this.runtimes.drain("drained", address, true, true))
			.isEqualTo(dev.gatewaylb.internal.runtime.Drain.DONE);
		try {
			int requests = 3_000;
			Map<String, Integer> backends = send("/drained/", requests, Map.of());
			double share = 2.0 / 3 * 1.4;
			int toLocal = backends.getOrDefault("a2", 0) + backends.getOrDefault("a3", 0);
			double sigma = Math.sqrt(requests * share * (1 - share));
			assertThat(backends).doesNotContainKey("a1");
			assertThat((double) toLocal).as("local answers of %s", backends)
				.isCloseTo(requests * share, within(5 * sigma));
			assertThat(report("drained").locality().levels().get(0)).satisfies((level) -> {
				assertThat(level.healthy()).isEqualTo(2);
				assertThat(level.share()).isCloseTo(share, within(1e-9));
			});
		}
		finally {
			this.runtimes.drain("drained", address, false, true);
		}
	}

	@Test
	void aKeyKeepsItsEndpointWhenAnotherLocalEndpointIsEjected() {
		Map<String, String> before = new HashMap<>();
		for (int key = 0; key < 1_000; key++) {
			before.put("k" + key, backend("/hashed/", "k" + key));
		}
		assertThat(before.values()).allSatisfy((backend) -> assertThat(backend).startsWith("a"));
		ServiceRuntime runtime = ready("hashed");
		EndpointState ejected = state("hashed", "127.0.0.1:" + local.get(1).port());
		long now = runtime.nanoTime();
		// Ejected for the rest of the run: no other test uses this service.
		ejected.eject(now, now + Duration.ofMinutes(10).toNanos());
		runtime.balancer().reevaluate();
		{
			int moved = 0;
			int left = 0;
			for (Map.Entry<String, String> key : before.entrySet()) {
				String after = backend("/hashed/", key.getKey());
				if ("a2".equals(key.getValue())) {
					moved++;
					left += after.startsWith("b") ? 1 : 0;
					assertThat(after).isNotEqualTo("a2");
				}
				else {
					assertThat(after).as("key %s", key.getKey()).isEqualTo(key.getValue());
				}
			}
			// A fifth of the ejected endpoint's keys leave the zone (93.3% stays).
			assertThat(moved).isPositive();
			assertThat((double) left / moved).isCloseTo(0.2, within(0.12));
		}
	}

	@Test
	void aQueueingZoneSpillsToTheNextWhereStrictPreferenceStays() {
		// One client: every request stays in the zone.
		Map<String, Integer> calm = send("/aware/", 100, Map.of());
		assertThat(calm.keySet()).as("one client's requests: %s", calm)
			.allSatisfy((backend) -> assertThat(backend).startsWith("wa"));
		// 32 clients queue at zone-a's three single-worker backends.
		Load strict = load("/strict/", 32, 600);
		Load aware = load("/aware/", 32, 600);
		System.out.printf("locality load-aware at 32 clients: strict %s; load-aware %s%n", strict, aware);
		assertThat(strict.remoteShare()).as("strict: %s", strict).isZero();
		assertThat(aware.remoteShare()).as("load-aware: %s", aware).isGreaterThanOrEqualTo(0.10);
	}

	/**
	 * Sends GETs one after the other, counting the backends that answered ({@code error}
	 * for a status other than 200).
	 */
	private Map<String, Integer> send(String path, int requests, Map<String, String> headers) {
		Map<String, Integer> backends = new HashMap<>();
		for (int i = 0; i < requests; i++) {
			GatewayClient.Answer answer = this.client.getNow(path, headers);
			backends.merge((answer.status() == 200) ? answer.backend() : "error", 1, Integer::sum);
		}
		return backends;
	}

	private String backend(String path, String key) {
		GatewayClient.Answer answer = this.client.getNow(path, Map.of("X-Key", key));
		assertThat(answer.status()).isEqualTo(200);
		return answer.backend();
	}

	/**
	 * Runs {@code clients} closed-loop clients until {@code answers} answers after the
	 * first 200 (the spill's first windows), and returns the share of answers from the
	 * other zone among them.
	 */
	private Load load(String path, int clients, int answers) {
		try (ClientLoad load = new ClientLoad(this.client, path, clients)) {
			load.await(200);
			ClientLoad.Window window = load.window(answers);
			assertThat(load.failures()).as("errors: %s", load.failureCauses()).isZero();
			long remote = window.samples().stream().filter((sample) -> sample.backend().startsWith("wb")).count();
			Map<String, Integer> backends = new HashMap<>();
			window.samples().forEach((sample) -> backends.merge(sample.backend(), 1, Integer::sum));
			return new Load((double) remote / window.size(), window.size(), backends);
		}
		finally {
			await().atMost(Duration.ofSeconds(10)).until(() -> inFlight(path.replace("/", "")) == 0);
		}
	}

	private GatewayLbReport.ServiceReport report(String service) {
		return (GatewayLbReport.ServiceReport) this.endpoint.one(service, SecurityContext.NONE);
	}

	private static long[] picks(Snapshot<Member> snapshot) {
		long[] picks = new long[snapshot.size()];
		for (int i = 0; i < picks.length; i++) {
			picks[i] = snapshot.state(i).picks();
		}
		return picks;
	}

	private static void instances(DynamicPropertyRegistry registry, String service, List<String> zoneA,
			List<String> zoneB) {
		List<String> uris = new ArrayList<>(zoneA);
		uris.addAll(zoneB);
		for (int i = 0; i < uris.size(); i++) {
			String instance = "spring.cloud.discovery.client.simple.instances." + service + "[" + i + "]";
			String uri = uris.get(i);
			String zone = (i < zoneA.size()) ? "zone-a" : "zone-b";
			registry.add(instance + ".uri", () -> uri);
			registry.add(instance + ".metadata.zone", () -> zone);
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByAddress(new byte[] { 127, 0, 0, 1 }))) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * What a load run saw: the share of answers from the other zone, the answers
	 * measured, and who gave them.
	 */
	record Load(double remoteShare, int answers, Map<String, Integer> backends) {

		@Override
		public String toString() {
			return String.format("remote %.1f%%, %d answers %s", this.remoteShare * 100, this.answers, this.backends);
		}

	}

}
