package dev.gatewaylb.sample;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;
import static org.awaitility.Awaitility.await;

/**
 * Sends real HTTP requests through the sample gateway to its demo backends and checks
 * which backend answered, as a user of the sample would with curl.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class SampleGatewayIT {

	private static final List<String> BACKENDS = List.of("alpha", "beta", "gamma");

	@DynamicPropertySource
	static void backendPorts(DynamicPropertyRegistry registry) {
		FreePorts.registerBackendPorts(registry);
	}

	@LocalServerPort
	private int port;

	private WebTestClient client;

	@BeforeEach
	void bindClient() {
		this.client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + this.port).build();
	}

	@Test
	void weightedRouteFollowsSmoothWeightedRoundRobinOfWeights512() {
		List<String> backends = IntStream.range(0, 800).mapToObj((i) -> backend("/weighted/")).toList();
		assertSoftly((softly) -> {
			softly.assertThat(backends.subList(0, 8))
				.containsExactly("alpha", "gamma", "alpha", "alpha", "beta", "alpha", "gamma", "alpha");
			softly.assertThat(countByBackend(backends))
				.containsExactlyInAnyOrderEntriesOf(Map.of("alpha", 500L, "beta", 100L, "gamma", 200L));
		});
	}

	@Test
	void stickyRouteSendsEachUserToOneBackend() {
		Map<String, String> backendByUser = new HashMap<>();
		for (int i = 1; i <= 50; i++) {
			String user = "u" + i;
			List<String> backends = IntStream.range(0, 5)
				.mapToObj((n) -> backend("/sticky/", (headers) -> headers.set("X-User", user)))
				.toList();
			assertThat(new HashSet<>(backends)).as("backends that answered %s", user).hasSize(1);
			backendByUser.put(user, backends.get(0));
		}
		assertThat(new HashSet<>(backendByUser.values())).as("backends used by 50 users").hasSizeGreaterThan(1);
	}

	@Test
	void shopRouteSendsAboutOneNewClientInTenToTheCanary() {
		int requests = 1_000;
		long canary = IntStream.range(0, requests).mapToObj((i) -> backend("/shop/")).filter("gamma"::equals).count();
		double sigma = Math.sqrt(requests * 0.1 * 0.9);
		assertThat((double) canary).isBetween(requests * 0.1 - 3 * sigma, requests * 0.1 + 3 * sigma);
	}

	@Test
	void shopRouteKeepsAClientWithItsCookieOnOneVersion() {
		for (int client = 0; client < 20; client++) {
			EntityExchangeResult<String> first = this.client.get()
				.uri("/shop/")
				.exchange()
				.expectBody(String.class)
				.returnResult();
			String cookie = first.getResponseCookies().getFirst("GWLB_AFFINITY").getValue();
			boolean canary = "gamma".equals(first.getResponseHeaders().getFirst("X-Backend"));
			for (int i = 0; i < 20; i++) {
				String backend = backend("/shop/",
						(headers) -> headers.set(HttpHeaders.COOKIE, "GWLB_AFFINITY=" + cookie));
				assertThat("gamma".equals(backend)).as("client %d request %d went to %s", client, i, backend)
					.isEqualTo(canary);
			}
		}
		assertThat(backend("/shop/", (headers) -> headers.set("X-Gateway-Target", "shop-canary"))).isEqualTo("gamma");
	}

	@Test
	void mirroredRouteShowsTheShadowsMismatchesAndNeverItsAnswers() {
		for (int i = 0; i < 10; i++) {
			assertThat(backend("/mirrored/")).isIn("alpha", "beta");
			assertThat(backend("/mirrored/legacy/orders")).isIn("alpha", "beta");
		}
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			String report = this.client.get()
				.uri("/actuator/gatewaylb/mirrored")
				.accept(MediaType.APPLICATION_JSON)
				.exchange()
				.expectBody(String.class)
				.returnResult()
				.getResponseBody();
			assertThat(report).contains("\"match\":10,\"mismatch\":10")
				.contains(
						"\"primaryStatus\":200,\"shadowStatus\":404,\"bodyDiffers\":false,\"path\":\"/legacy/orders\"");
		});
	}

	@Test
	void zonedRouteStaysInTheGatewaysZone() {
		Map<String, Long> backends = countByBackend(
				IntStream.range(0, 200).mapToObj((i) -> backend("/zoned/")).toList());
		assertThat(backends).containsOnlyKeys("alpha", "beta");
	}

	@Test
	void sessionRouteKeepsAClientWithItsEndpointCookieOnOneBackend() {
		Map<String, Long> firstBackends = new HashMap<>();
		for (int client = 0; client < 9; client++) {
			EntityExchangeResult<String> first = this.client.get()
				.uri("/session/")
				.exchange()
				.expectBody(String.class)
				.returnResult();
			String cookie = first.getResponseCookies().getFirst("GWLB_ENDPOINT").getValue();
			String backend = first.getResponseHeaders().getFirst("X-Backend");
			firstBackends.merge(backend, 1L, Long::sum);
			for (int i = 0; i < 10; i++) {
				assertThat(
						backend("/session/", (headers) -> headers.set(HttpHeaders.COOKIE, "GWLB_ENDPOINT=" + cookie)))
					.as("client %d request %d", client, i)
					.isEqualTo(backend);
			}
		}
		assertThat(firstBackends).as("new sessions, round-robin").hasSize(3);
	}

	@Test
	void leastRouteAnswersFromOneOfTheBackends() {
		assertThat(backend("/least/")).isIn(BACKENDS);
	}

	@Test
	void backendsHonourDelayAndIgnoreInvalidValues() {
		long start = System.nanoTime();
		backend("/least/slow?delay=300");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		for (String delay : List.of("abc", "-5", "1.5", "")) {
			assertThat(backend("/least/?delay=" + delay)).as("backend for delay=%s", delay).isIn(BACKENDS);
		}
	}

	@Test
	void hedgedRouteAnswersAroundTheOneSlowBackend() {
		// The hedge delay needs 20 answers in the latency window, which the runtime
		// thread rolls once a second.
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			IntStream.range(0, 10).forEach((i) -> backend("/hedged/"));
			return hedgeReport().matches("(?s).*\"delayMillis\":[0-9].*");
		});
		for (int i = 0; i < 6; i++) {
			// Alpha answers after 3 s: an answer from another backend did not wait for
			// it.
			String backend = backend("/hedged/?delay=3000&slow=alpha");
			assertThat(backend).as("request %d", i).isNotEqualTo("alpha");
		}
		// Round-robin sent two of the six to alpha first; each got a backup, which won.
		assertThat(hedgeReport()).containsPattern("\"sent\":[2-9],\"won\":[2-9],");
	}

	@Test
	void releaseRolloutIsRolledBackWhenTheNewReleaseFails() {
		// The demo switch: gamma, the new release, answers 500 to these requests. The
		// first judgement (10 s after start-up, 20 requests of the new release at least)
		// rolls it back; until then the clients that reach it get its 500.
		await().atMost(Duration.ofSeconds(40)).until(() -> {
			IntStream.range(0, 20)
				.forEach((i) -> this.client.get()
					.uri("/release/?fail=gamma")
					.exchange()
					.expectBody(String.class)
					.returnResult());
			return report("/actuator/gatewaylb/release").contains("\"state\":\"rolled-back\"");
		});
		assertThat(report("/actuator/gatewaylb/release"))
			.contains("\"reason\":\"error rate 1.0000 against 0.0000 of the other targets");
		List<String> backends = IntStream.range(0, 30).mapToObj((i) -> backend("/release/?fail=gamma")).toList();
		assertThat(backends).doesNotContain("gamma");
	}

	private String report(String uri) {
		return this.client.get()
			.uri(uri)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

	private String hedgeReport() {
		return report("/actuator/gatewaylb/hedged");
	}

	private String backend(String uri) {
		return backend(uri, (headers) -> {
		});
	}

	/**
	 * Sends one GET through the gateway, checks the demo backend's answer, and returns
	 * the name of the backend that answered.
	 */
	private String backend(String uri, Consumer<HttpHeaders> headers) {
		EntityExchangeResult<String> result = this.client.get()
			.uri(uri)
			.headers(headers)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
			.expectBody(String.class)
			.returnResult();
		String backend = result.getResponseHeaders().getFirst("X-Backend");
		assertThat(result.getResponseBody()).as("body from %s", backend).isEqualTo(backend + "\n");
		return backend;
	}

	private static Map<String, Long> countByBackend(List<String> backends) {
		return backends.stream().collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
	}

}
