package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.gatewaylb.gateway.filter.AttemptFilter;
import dev.gatewaylb.gateway.filter.InFlightReleaseFilter;
import dev.gatewaylb.gateway.filter.UpstreamRoutingFilter;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.NettyRoutingFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.filter.RouteToRequestUrlFilter;
import org.springframework.cloud.gateway.filter.WebsocketRoutingFilter;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every algorithm routing real requests through {@code lb://} to real backends.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BalancingIT extends GatewayIntegrationTest {

	static final List<TestBackend> backends = List.of(TestBackend.start("a"), TestBackend.start("b"),
			TestBackend.start("c"));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		gateway.route("rr").instances("rr", backends, 5, 1, 2);
		for (String algorithm : List.of("least-requests", "power-of-two-choices", "peak-ewma", "consistent-hash")) {
			gateway.route(algorithm)
				.instances(algorithm, backends)
				.set("gateway.lb.services." + algorithm + ".algorithm", algorithm);
		}
		gateway.set("gateway.lb.services.consistent-hash.hash-key", "header:X-User");
		gateway.route("by-cookie")
			.instances("by-cookie", backends)
			.set("gateway.lb.services.by-cookie.algorithm", "consistent-hash")
			.set("gateway.lb.services.by-cookie.hash-key", "cookie:SESSION");
		gateway.route("by-ip")
			.instances("by-ip", backends)
			.set("gateway.lb.services.by-ip.algorithm", "consistent-hash")
			.set("gateway.lb.trusted-proxies[0]", "127.0.0.1/32");
		gateway.route("ghost");
	}

	@Autowired
	List<GlobalFilter> filters;

	@Test
	void runsItsFiltersWhereFilterOrderSaysAmongTheGatewaysOwn() {
		List<Class<?>> chain = this.filters.stream()
			.sorted(AnnotationAwareOrderComparator.INSTANCE)
			.map(Object::getClass)
			.filter((type) -> List
				.of(InFlightReleaseFilter.class, NettyWriteResponseFilter.class, RouteToRequestUrlFilter.class,
						AttemptFilter.class, ReactiveLoadBalancerClientFilter.class, UpstreamRoutingFilter.class,
						WebsocketRoutingFilter.class, NettyRoutingFilter.class)
				.contains(type))
			.collect(java.util.stream.Collectors.toList());
		assertThat(chain).containsExactly(InFlightReleaseFilter.class, NettyWriteResponseFilter.class,
				RouteToRequestUrlFilter.class, AttemptFilter.class, ReactiveLoadBalancerClientFilter.class,
				UpstreamRoutingFilter.class, WebsocketRoutingFilter.class, NettyRoutingFilter.class);
	}

	@BeforeEach
	void connect() {
		this.client = new GatewayClient(this.port);
		backends.forEach(TestBackend::reset);
	}

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
	}

	@Test
	void weightsFiveOneTwoGiveExactCountsOver800SequentialRequests() {
		Map<String, Integer> counts = new HashMap<>();
		StringBuilder sequence = new StringBuilder();
		for (int i = 0; i < 800; i++) {
			GatewayClient.Answer answer = this.client.getNow("/rr/hello");
			assertThat(answer.status()).isEqualTo(200);
			counts.merge(answer.backend(), 1, Integer::sum);
			sequence.append(answer.backend());
		}
		assertThat(counts).containsExactlyInAnyOrderEntriesOf(Map.of("a", 500, "b", 100, "c", 200));
		// nginx's order, at whatever phase earlier tests left the service in
		assertThat("acaabaca".repeat(101)).contains(sequence);
		assertThat(backends.get(0).requests()).isEqualTo(500);
	}

	@Test
	void leastRequestsSendsRequestsThatNeverOverlapToTheFirstEndpoint() {
		// Every count is 0 at each pick, and ties go to the first endpoint listed. The
		// client can read a whole answer just before the gateway releases its request:
		// wait for the release, so that requests really never overlap.
		for (int i = 0; i < 30; i++) {
			if (this.runtimes.snapshot("least-requests") != null) {
				await().atMost(Duration.ofSeconds(5)).until(() -> inFlight("least-requests") == 0);
			}
			assertThat(this.client.getNow("/least-requests/x").backend()).isEqualTo("a");
		}
		assertThat(this.runtimes.snapshot("least-requests").settings().algorithm().name()).isEqualTo("LEAST_REQUESTS");
	}

	@ParameterizedTest
	@ValueSource(strings = { "power-of-two-choices", "peak-ewma", "consistent-hash" })
	void spreadsRequestsOverEveryBackendWithTheOtherAlgorithms(String algorithm) {
		Map<String, Integer> counts = new HashMap<>();
		for (int i = 0; i < 90; i++) {
			GatewayClient.Answer answer = this.client.getNow("/" + algorithm + "/x", Map.of("X-User", "user-" + i));
			assertThat(answer.status()).isEqualTo(200);
			counts.merge(answer.backend(), 1, Integer::sum);
		}
		assertThat(counts).as(algorithm).containsOnlyKeys("a", "b", "c");
		assertThat(this.runtimes.snapshot(algorithm).settings().algorithm().name())
			.isEqualTo(algorithm.toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
	}

	@Test
	void consistentHashKeepsEachHeaderKeyOnOneBackend() {
		Set<String> used = new HashSet<>();
		for (int user = 0; user < 50; user++) {
			Map<String, String> headers = Map.of("X-User", "user-" + user);
			String first = this.client.getNow("/consistent-hash/", headers).backend();
			for (int i = 0; i < 5; i++) {
				assertThat(this.client.getNow("/consistent-hash/", headers).backend()).isEqualTo(first);
			}
			used.add(first);
		}
		assertThat(used).hasSizeGreaterThanOrEqualTo(2);
	}

	@Test
	void consistentHashReadsTheFirstCookieOfTheName() {
		for (int user = 0; user < 20; user++) {
			String session = "s" + user;
			String alone = this.client.getNow("/by-cookie/", Map.of("Cookie", "SESSION=" + session)).backend();
			String first = this.client
				.getNow("/by-cookie/", Map.of("Cookie", "other=1; SESSION=\"" + session + "\"; SESSION=zzz-" + user))
				.backend();
			assertThat(first).isEqualTo(alone);
		}
	}

	@Test
	void consistentHashOnTheClientAddressBelievesForwardedForFromATrustedProxyOnly() {
		// The test client connects from 127.0.0.1, a trusted proxy here.
		Set<String> used = new HashSet<>();
		for (int client = 0; client < 30; client++) {
			Map<String, String> headers = Map.of("X-Forwarded-For", "198.51.100." + client + ", 127.0.0.1");
			String first = this.client.getNow("/by-ip/", headers).backend();
			for (int i = 0; i < 3; i++) {
				assertThat(this.client.getNow("/by-ip/", headers).backend()).isEqualTo(first);
			}
			used.add(first);
		}
		assertThat(used).as("clients behind the proxy spread").hasSizeGreaterThanOrEqualTo(2);
		String proxyItself = this.client.getNow("/by-ip/").backend();
		for (int i = 0; i < 5; i++) {
			assertThat(this.client.getNow("/by-ip/").backend()).isEqualTo(proxyItself);
		}
	}

	@Test
	void keepsAStreamedResponseInFlightUntilItsLastChunkIsWritten() {
		List<Integer> inFlightWhileStreaming = new java.util.ArrayList<>();
		List<String> chunks = this.client.stream("/least-requests/stream?chunks=12&gap=100")
			.doOnNext((chunk) -> inFlightWhileStreaming.add(inFlight("least-requests")))
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(chunks).isNotEmpty();
		// The gateway's own lifecycle ends the request at the headers; ours at the body's
		// end.
		assertThat(inFlightWhileStreaming.subList(0, inFlightWhileStreaming.size() - 1)).isNotEmpty().containsOnly(1);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(inFlight("least-requests")).isZero());
	}

	@Test
	void answers503WhenAServiceHasNoInstances() {
		assertThat(this.client.getNow("/ghost/").status()).isEqualTo(503);
	}

	@Test
	void releasesEveryInFlightGuardAfterTheResponses() {
		for (int i = 0; i < 20; i++) {
			this.client.getNow("/least-requests/");
			this.client.getNow("/rr/");
		}
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> this.runtimes.snapshots().values().forEach((snapshot) -> {
				for (int i = 0; i < snapshot.size(); i++) {
					assertThat(snapshot.state(i).inFlight()).as(snapshot.state(i).address()).isZero();
				}
			}));
	}

}
