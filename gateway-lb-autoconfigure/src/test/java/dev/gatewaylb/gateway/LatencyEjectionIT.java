package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Latency-based ejection ({@code health.passive.latency-factor}) under 16 concurrent
 * clients: one backend ten times slower than its two peers (20/20/200 ms) is ejected, so
 * that it gets nothing; it comes back, ramping, once it is fast again; and never more
 * endpoints are out than {@code max-ejection-percent} allows; one client's slow requests
 * sent to one endpoint with its affinity cookie do not eject it. What ejection does for
 * the tail (p99 against the all-healthy p99) is a target of the load benchmarks
 * ({@code run.sh tail}, docs/benchmarks.md).
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class LatencyEjectionIT extends GatewayIntegrationTest {

	static final int CLIENTS = 16;

	static final List<TestBackend> tail = List.of(TestBackend.start("tail-fast-1"), TestBackend.start("tail-fast-2"),
			TestBackend.start("tail-slow"));

	static final List<TestBackend> capped = List.of(TestBackend.start("cap-fast-1"), TestBackend.start("cap-fast-2"),
			TestBackend.start("cap-fast-3"), TestBackend.start("cap-slow-1"), TestBackend.start("cap-slow-2"));

	static final List<TestBackend> pinned = List.of(TestBackend.start("pin-1"), TestBackend.start("pin-2"),
			TestBackend.start("pin-3"));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		gateway.route("tail")
			.instances("tail", tail)
			.set("gateway.lb.services.tail.algorithm", "least-requests")
			.set("gateway.lb.services.tail.slow-start", "3s")
			.set("gateway.lb.services.tail.health.passive.latency-factor", 3)
			.set("gateway.lb.services.tail.health.passive.base-ejection-time", "8s");
		gateway.route("capped")
			.instances("capped", capped)
			.set("gateway.lb.services.capped.algorithm", "least-requests")
			.set("gateway.lb.services.capped.health.passive.latency-factor", 3)
			.set("gateway.lb.services.capped.health.passive.max-ejection-percent", 20)
			.set("gateway.lb.services.capped.health.passive.base-ejection-time", "30s");
		gateway.route("pinned")
			.instances("pinned", pinned)
			.set("gateway.lb.services.pinned.algorithm", "round-robin")
			.set("gateway.lb.services.pinned.health.passive.latency-factor", 3)
			.set("gateway.lb.services.pinned.health.passive.base-ejection-time", "30s")
			.set("gateway.lb.services.pinned.affinity.cookie", "GWLB_EP")
			.set("gateway.lb.services.pinned.affinity.secret", "the affinity secret, 32 bytes or more");
	}

	@AfterAll
	static void stopBackends() {
		tail.forEach(TestBackend::close);
		capped.forEach(TestBackend::close);
		pinned.forEach(TestBackend::close);
	}

	@Test
	void aTenTimesSlowerBackendIsEjectedAndComesBackRampingWhenItIsFastAgain() {
		TestBackend slow = tail.get(2);
		tail.forEach((backend) -> backend.delay(Duration.ofMillis(20)));
		slow.delay(Duration.ofMillis(200));
		try (ClientLoad load = new ClientLoad(this.client, "/tail/", CLIENTS, () -> ejected("tail"))) {
			await().atMost(Duration.ofSeconds(20)).until(() -> !isPickable("tail", address(slow)));
			// Requests that picked it before the rebuild still finish there (within its
			// 200 ms): the window starts after them.
			load.awaitAnsweredSoFar();
			ClientLoad.Window window = load.window(400);
			// The window means something only if the ejection lasted through it: 400
			// answers take half a second here, a few on a machine busy with other builds,
			// against the 8 s ejection.
			assertThat(isEjected("tail", slow)).as("still ejected after the window").isTrue();
			assertThat(window.count("tail-slow")).as("slow backend's answers while ejected: %s", window).isZero();
			slow.delay(Duration.ofMillis(20));
			// Back under slow start: for its first seconds it weighs less than its peers.
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				double weight = effectiveWeight("tail", slow);
				return !isEjected("tail", slow) && weight > 0 && weight < 1;
			});
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(load.window(600).share("tail-slow")).isGreaterThan(0.25));
			assertThat(isEjected("tail", slow)).as("fast again, so not ejected again").isFalse();
			assertThat(load.failures()).as("client-visible errors: %s", load.failureCauses()).isZero();
			assertThat(load.maxEjected()).as("most endpoints ejected at once (50% of 3)").isEqualTo(1);
		}
	}

	@Test
	void neverEjectsMoreThanMaxEjectionPercentEvenWhenMoreAreSlow() {
		capped.forEach((backend) -> backend.delay(Duration.ofMillis(20)));
		capped.get(3).delay(Duration.ofMillis(200));
		capped.get(4).delay(Duration.ofMillis(200));
		try (ClientLoad load = new ClientLoad(this.client, "/capped/", CLIENTS, () -> ejected("capped"))) {
			await().atMost(Duration.ofSeconds(20)).until(() -> ejected("capped") >= 1);
			// Both slow endpoints stay outliers for many evaluations; 20% of 5 is one.
			load.await(1500);
			assertThat(load.maxEjected()).isEqualTo(1);
			assertThat(load.failures()).as("client-visible errors: %s", load.failureCauses()).isZero();
		}
	}

	@Test
	void oneClientsSlowRequestsThatFollowItsAffinityCookieDoNotEjectItsEndpoint() {
		pinned.forEach((backend) -> backend.delay(Duration.ofMillis(20)));
		// The client's session: the endpoint that answered its first request, named by
		// the cookie it got.
		GatewayClient.Answer first = this.client.getNow("/pinned/");
		String cookie = first.setCookies()
			.stream()
			.filter((line) -> line.startsWith("GWLB_EP="))
			.map((line) -> line.substring(0, line.indexOf(';')))
			.findFirst()
			.orElseThrow();
		TestBackend target = pinned.stream().filter((b) -> b.name().equals(first.backend())).findFirst().orElseThrow();
		EndpointState endpoint = state("pinned", address(target));
		long samplesBefore = endpoint.ejectionSamples();
		// Everyone else: one lane, spread over the three. The client: six lanes of a
		// request the application answers in 200 ms, all following the cookie, most of
		// what its endpoint answers.
		try (ClientLoad others = new ClientLoad(this.client, "/pinned/", 1);
				ClientLoad slow = new ClientLoad(this.client, "/pinned/?delay=200", 6, () -> ejected("pinned"),
						(number) -> Map.of("Cookie", cookie))) {
			ClientLoad.Window window = slow.window(150);
			assertThat(window.count(target.name())).as("every slow request on its endpoint: %s", window)
				.isEqualTo(window.size());
			assertThat(slow.maxEjected()).as("endpoints ejected meanwhile").isZero();
			assertThat(endpoint.ejections()).isZero();
			assertThat(endpoint.ejectionSamples() - samplesBefore).as("the others' samples only")
				.isLessThan(others.served());
			assertThat(others.failures() + slow.failures()).isZero();
		}
	}

	private boolean isEjected(String service, TestBackend backend) {
		return state(service, address(backend)).isEjected(this.runtimes.nanoTime());
	}

	private static String address(TestBackend backend) {
		return "127.0.0.1:" + backend.port();
	}

	private double effectiveWeight(String service, TestBackend backend) {
		Snapshot<Member> snapshot = this.runtimes.snapshot(service);
		for (int i = 0; i < snapshot.size(); i++) {
			if (snapshot.state(i).address().equals("127.0.0.1:" + backend.port())) {
				return snapshot.effectiveWeight(i);
			}
		}
		throw new IllegalStateException(backend.name());
	}

	private int ejected(String service) {
		Snapshot<Member> snapshot = this.runtimes.snapshot(service);
		long now = this.runtimes.nanoTime();
		int ejected = 0;
		for (int i = 0; snapshot != null && i < snapshot.size(); i++) {
			ejected += snapshot.state(i).isEjected(now) ? 1 : 0;
		}
		return ejected;
	}

}
