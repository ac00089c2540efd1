package dev.gatewaylb.gateway;

import dev.gatewaylb.internal.actuate.GatewayLbEndpoint;
import dev.gatewaylb.internal.settings.LiveSettings;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What an operator does while traffic flows: refresh weights and algorithms, read the
 * actuator endpoint and the meters, drain an endpoint.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OperationsIT extends GatewayIntegrationTest {

	static final List<TestBackend> backends = List.of(TestBackend.start("a"), TestBackend.start("b"),
			TestBackend.start("c"));

	static {
		backends.forEach((backend) -> backend.delay(Duration.ofMillis(20)));
	}

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("live")
			.instances("live", backends, 1, 1, 1)
			.route("phase")
			.instances("phase", backends, 5, 1, 1)
			.route("ops")
			.instances("ops", backends, 1, 1, 1)
			.route("shop")
			.set("gateway.lb.splits.shop.targets.ops", 1)
			.set("management.endpoints.web.exposure.include", "gatewaylb,prometheus")
			.set("management.endpoint.gatewaylb.access", "unrestricted");
	}

	@Autowired
	ConfigurableApplicationContext context;

	@Autowired
	LiveSettings settings;

	private final Map<String, Object> overrides = new HashMap<>();

	@AfterEach
	void restore() {
		if (!this.overrides.isEmpty()) {
			java.util.Set<String> keys = java.util.Set.copyOf(this.overrides.keySet());
			this.overrides.clear();
			this.context.getEnvironment().getPropertySources().remove("overrides");
			this.context.publishEvent(new EnvironmentChangeEvent(this.context, keys));
		}
	}

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
	}

	@Test
	void refreshesWeightsAndAlgorithmUnderTwentyClientsWithoutAFailureOrALostCount() {
		AtomicInteger failures = new AtomicInteger();
		Map<Integer, Integer> failedStatuses = new java.util.concurrent.ConcurrentHashMap<>();
		AtomicLong served = new AtomicLong();
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicInteger lowestInFlight = new AtomicInteger();
		AtomicInteger highestInFlight = new AtomicInteger();
		Disposable sampler = Flux.interval(Duration.ofMillis(5)).subscribe((tick) -> {
			int[] counts = inFlightPerEndpoint("live");
			for (int count : counts) {
				lowestInFlight.accumulateAndGet(count, Math::min);
			}
			highestInFlight.accumulateAndGet(java.util.Arrays.stream(counts).sum(), Math::max);
		});
		Disposable traffic = Flux.range(0, 20)
			.flatMap((lane) -> Mono.defer(() -> this.client.get("/live/", Map.of("X-User", "one-user")))
				.doOnNext((answer) -> {
					if (answer.status() != 200) {
						failures.incrementAndGet();
						failedStatuses.merge(answer.status(), 1, Integer::sum);
					}
					served.incrementAndGet();
				})
				.repeat(running::get), 20)
			.subscribe();
		try {
			await().until(() -> served.get() > 300);

			refresh(instances("live", backends, 4, 1, 1));
			await().until(() -> this.runtimes.snapshot("live").endpoint(0).weight() == 4);
			Map<String, Integer> afterWeights = countOver(600, served);
			assertThat(afterWeights.get("a") / 600.0).as("%s", afterWeights)
				.isCloseTo(4 / 6.0, org.assertj.core.data.Offset.offset(0.05));

			refresh(Map.of("gateway.lb.services.live.algorithm", "consistent-hash", "gateway.lb.services.live.hash-key",
					"header:X-User"));
			await().until(() -> "CONSISTENT_HASH".equals(this.runtimes.snapshot("live").settings().algorithm().name()));
			Map<String, Integer> afterAlgorithm = countOver(300, served);
			assertThat(afterAlgorithm.values()).as("one key, one backend: %s", afterAlgorithm).contains(300);
		}
		finally {
			running.set(false);
			traffic.dispose();
		}
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(java.util.Arrays.stream(inFlightPerEndpoint("live")).sum()).isZero());
		sampler.dispose();
		assertThat(failures).as("answers by status: %s", failedStatuses).hasValue(0);
		assertThat(highestInFlight.get()).as("requests were in flight across the refreshes").isPositive();
		// A count reset while requests were in flight would go negative on their release.
		assertThat(lowestInFlight.get()).isZero();
	}

	@Test
	void keepsTheRoundRobinPhaseOfKeptEndpointsAcrossARebuild() {
		StringBuilder sequence = new StringBuilder();
		for (int i = 0; i < 3; i++) {
			sequence.append(this.client.getNow("/phase/").backend());
		}
		long generation = this.runtimes.snapshot("phase").generation();
		refresh(Map.of("gateway.lb.services.phase.slow-start", "30s"));
		for (int i = 0; i < 11; i++) {
			sequence.append(this.client.getNow("/phase/").backend());
		}
		assertThat(this.runtimes.snapshot("phase").generation()).as("the balancer was rebuilt")
			.isGreaterThan(generation);
		assertThat("aabacaa".repeat(4)).contains(sequence);
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					unknown algorithm | gateway.lb.services.ops.algorithm=fastest                                      | gateway.lb.services.ops.algorithm
					negative weight   | gateway.lb.splits.shop.targets.ops=-1                                          | gateway.lb.splits.shop
					split of a split  | gateway.lb.splits.shop.targets.inner=1,gateway.lb.splits.inner.targets.ops=1 | gateway.lb.splits.shop.targets.inner
					""")
	void rejectsAnInvalidRefreshWholeAndClearsTheErrorOnTheNextGoodOne(String mistake, String properties,
			String named) {
		long generation = this.settings.generation();
		double rejectedBefore = metric("gateway_lb_refreshes_total{outcome=\"rejected\"}");
		Map<String, Object> invalid = new HashMap<>();
		for (String property : properties.split(",")) {
			invalid.put(property.substring(0, property.indexOf('=')), property.substring(property.indexOf('=') + 1));
		}
		refresh(invalid);
		assertThat(this.settings.generation()).isEqualTo(generation);
		assertThat(this.settings.lastError()).contains(named);
		assertThat(json("/actuator/gatewaylb").get("lastError").asString()).as("to an anonymous reader")
			.isEqualTo(GatewayLbEndpoint.HIDDEN_ERROR)
			.doesNotContain(named);
		assertThat(metric("gateway_lb_refreshes_total{outcome=\"rejected\"}")).isEqualTo(rejectedBefore + 1);
		for (int i = 0; i < 6; i++) {
			assertThat(this.client.getNow("/shop/").status()).isEqualTo(200);
		}
		invalid.keySet().forEach(this.overrides::remove);
		refresh(Map.of("gateway.lb.services.ops.slow-start", "1s"));
		assertThat(this.settings.lastError()).isNull();
		assertThat(this.settings.generation()).isEqualTo(generation + 1);
	}

	@Test
	void reportsEveryServiceEndpointAndSplitAsJson() {
		for (int i = 0; i < 9; i++) {
			this.client.getNow("/shop/");
		}
		JsonNode report = json("/actuator/gatewaylb");
		assertThat(report.get("generation").asLong()).isPositive();
		JsonNode ops = report.get("services").get("ops");
		assertThat(ops.get("algorithm").asString()).isEqualTo("round-robin");
		assertThat(ops.get("slowStartMillis").asLong()).isZero();
		assertThat(ops.get("endpoints")).hasSize(3);
		long picks = 0;
		for (JsonNode endpoint : ops.get("endpoints")) {
			assertThat(endpoint.get("address").asString()).startsWith("127.0.0.1:");
			assertThat(endpoint.get("inFlight").asInt()).isZero();
			assertThat(endpoint.get("state").asString()).isEqualTo("healthy");
			assertThat(endpoint.has("latencyEwmaMillis")).isTrue();
			picks += endpoint.get("picks").asLong();
		}
		assertThat(picks).isGreaterThanOrEqualTo(9);
		JsonNode pool = ops.get("pool");
		assertThat(pool.get("maxConnections").asInt()).isEqualTo(256);
		assertThat(pool.get("maxPending").asInt()).isEqualTo(256);
		assertThat(pool.get("active").asInt()).isZero();
		assertThat(pool.get("idle").asInt()).as("kept-alive connections").isPositive();
		assertThat(pool.get("pending").asInt()).isZero();
		JsonNode target = report.get("splits").get("shop").get("targets").get(0);
		assertThat(target.get("service").asString()).isEqualTo("ops");
		assertThat(target.get("picks").asLong()).isGreaterThanOrEqualTo(9);
		assertThat(json("/actuator/gatewaylb/ops").get("endpoints")).hasSize(3);
		assertThat(json("/actuator/gatewaylb/shop").get("targets")).hasSize(1);
		assertThat(this.client.getNow("/actuator/gatewaylb/nothing-of-that-name").status()).isEqualTo(404);
	}

	@Test
	void drainsAnEndpointThroughTheActuatorAndBringsItBack() {
		this.client.getNow("/ops/");
		String b = "127.0.0.1:" + URI.create(backends.get(1).uri()).getPort();
		GatewayClient.Answer drained = this.client.send("POST", "/actuator/gatewaylb/ops",
				"{\"endpoint\":\"" + b + "\",\"drain\":true}");
		assertThat(drained.status()).isEqualTo(200);
		assertThat(drained.body()).contains("\"state\":\"draining\"");
		for (int i = 0; i < 30; i++) {
			assertThat(this.client.getNow("/ops/").backend()).isNotEqualTo("b");
		}
		JsonNode endpoint = json("/actuator/gatewaylb/ops").get("endpoints").get(1);
		assertThat(endpoint.get("state").asString()).isEqualTo("draining");
		assertThat(endpoint.get("effectiveWeight").asDouble()).isZero();
		this.client.send("POST", "/actuator/gatewaylb/ops", "{\"endpoint\":\"" + b + "\",\"drain\":false}");
		Map<String, Integer> counts = new HashMap<>();
		for (int i = 0; i < 30; i++) {
			counts.merge(this.client.getNow("/ops/").backend(), 1, Integer::sum);
		}
		assertThat(counts).containsEntry("b", 10);
		assertThat(this.client.send("POST", "/actuator/gatewaylb/ops", "{\"endpoint\":\"nowhere:1\",\"drain\":true}")
			.status()).isEqualTo(404);
	}

	@Test
	void refusesADrainBeyondMaxDrainPercentUnlessTheCallForcesIt() {
		String a = "127.0.0.1:" + URI.create(backends.get(0).uri()).getPort();
		String b = "127.0.0.1:" + URI.create(backends.get(1).uri()).getPort();
		try {
			assertThat(post("{\"endpoint\":\"" + a + "\",\"drain\":true}", Map.of())).as("1 of 3").isEqualTo(200);
			GatewayClient.Answer refused = this.client.send("POST", "/actuator/gatewaylb/ops",
					"{\"endpoint\":\"" + b + "\",\"drain\":true}");
			assertThat(refused.status()).as("2 of 3, above 50%").isEqualTo(409);
			assertThat(refused.body()).contains("health.max-drain-percent", "\"force\": true");
			assertThat(json("/actuator/gatewaylb/ops").get("endpoints").get(1).get("state").asString())
				.isEqualTo("healthy");
			assertThat(post("{\"endpoint\":\"" + a + "\",\"drain\":true}", Map.of()))
				.as("draining one already draining again")
				.isEqualTo(200);
			assertThat(post("{\"endpoint\":\"" + b + "\",\"drain\":true,\"force\":true}", Map.of())).as("forced")
				.isEqualTo(200);
			assertThat(json("/actuator/gatewaylb/ops").get("endpoints").get(1).get("state").asString())
				.isEqualTo("draining");
		}
		finally {
			post("{\"endpoint\":\"" + a + "\",\"drain\":false}", Map.of());
			post("{\"endpoint\":\"" + b + "\",\"drain\":false}", Map.of());
		}
	}

	@Test
	void refusesADrainABrowserSendsForAnotherSiteAndTakesOneFromTheSameOrigin() {
		String b = "127.0.0.1:" + URI.create(backends.get(1).uri()).getPort();
		String drain = "{\"endpoint\":\"" + b + "\",\"drain\":true}";
		assertThat(post(drain, Map.of("Sec-Fetch-Site", "cross-site"))).as("cross-site").isEqualTo(403);
		assertThat(post(drain, Map.of("Sec-Fetch-Site", "same-site"))).as("same-site").isEqualTo(403);
		assertThat(post(drain, Map.of("Origin", "http://evil.example"))).as("another origin").isEqualTo(403);
		assertThat(post(drain, Map.of("Origin", "null"))).as("an opaque origin").isEqualTo(403);
		assertThat(json("/actuator/gatewaylb/ops").get("endpoints").get(1).get("state").asString())
			.as("nothing drained")
			.isEqualTo("healthy");
		assertThat(post(drain, Map.of("Origin", "http://127.0.0.1:" + this.port, "Sec-Fetch-Site", "same-origin")))
			.as("the dashboard's own write")
			.isEqualTo(200);
		assertThat(post("{\"endpoint\":\"" + b + "\",\"drain\":false}", Map.of())).as("curl's").isEqualTo(200);
	}

	@Test
	void answersTheManagementContextOnlyForAnAllowedHostWhateverThePathSpelling() {
		String b = "127.0.0.1:" + URI.create(backends.get(1).uri()).getPort();
		String drain = "{\"endpoint\":\"" + b + "\",\"drain\":true}";
		// A page on x.attacker.example whose name now points at the gateway (DNS
		// rebinding): to the browser it is the same origin, and it says so.
		String rebound = "x.attacker.example:" + this.port;
		assertThat(send("POST", "/actuator/gatewaylb/ops", drain,
				Map.of("Host", rebound, "Origin", "http://" + rebound, "Sec-Fetch-Site", "same-origin")))
			.as("the rebinding triple's drain")
			.isEqualTo(403);
		assertThat(send("GET", "/actuator/gatewaylb/ops", null, Map.of("Host", rebound))).as("its read").isEqualTo(403);
		assertThat(send("GET", "/actuator/prometheus", null, Map.of("Host", rebound))).as("another endpoint's read")
			.isEqualTo(403);
		// Spellings Spring's handler mappings take for the endpoint.
		for (String path : List.of("/actuator/gatewaylb;x=1/ops", "/actuator/%67atewaylb/ops",
				"/%61ctuator/gatewaylb/ops", "/actuator//gatewaylb/ops")) {
			assertThat(send("POST", path, drain, Map.of("Sec-Fetch-Site", "cross-site"))).as(path).isEqualTo(403);
		}
		assertThat(json("/actuator/gatewaylb/ops").get("endpoints").get(1).get("state").asString())
			.as("nothing drained")
			.isEqualTo("healthy");
		// The application's own routes are not the management context.
		assertThat(send("GET", "/ops/", null, Map.of("Host", rebound))).as("a proxied request").isEqualTo(200);
		// A name the operator allows, live.
		String named = "gw.internal.example:" + this.port;
		assertThat(send("GET", "/actuator/gatewaylb/ops", null, Map.of("Host", named))).isEqualTo(403);
		refresh(Map.of("gateway.lb.actuator.allowed-hosts[0]", "*.internal.example"));
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(send("GET", "/actuator/gatewaylb/ops", null, Map.of("Host", named)))
				.isEqualTo(200));
		assertThat(send("GET", "/actuator/gatewaylb/ops", null, Map.of("Host", rebound))).isEqualTo(403);
	}

	private int send(String method, String path, @org.jspecify.annotations.Nullable String json,
			Map<String, String> headers) {
		return reactor.netty.http.client.HttpClient.newConnection().headers((h) -> {
			h.set("Content-Type", "application/json");
			headers.forEach(h::set);
		})
			.request(io.netty.handler.codec.http.HttpMethod.valueOf(method))
			.uri("http://127.0.0.1:" + this.port + path)
			.send((request, out) -> (json != null) ? out.sendString(Mono.just(json)) : out)
			.responseSingle(
					(response, body) -> body.asString().defaultIfEmpty("").map((text) -> response.status().code()))
			.block(Duration.ofSeconds(10));
	}

	private int post(String json, Map<String, String> headers) {
		return reactor.netty.http.client.HttpClient.newConnection().headers((h) -> {
			h.set("Content-Type", "application/json");
			headers.forEach(h::set);
		})
			.post()
			.uri("http://127.0.0.1:" + this.port + "/actuator/gatewaylb/ops")
			.send(reactor.netty.ByteBufFlux.fromString(Mono.just(json)))
			.responseSingle(
					(response, body) -> body.asString().defaultIfEmpty("").map((text) -> response.status().code()))
			.block(Duration.ofSeconds(10));
	}

	@Test
	void exportsTheMetersWithBoundedTagsAndRemovesThoseOfEndpointsThatLeave() {
		this.client.getNow("/ops/");
		this.client.getNow("/shop/");
		String c = "127.0.0.1:" + URI.create(backends.get(2).uri()).getPort();
		String scrape = this.client.getNow("/actuator/prometheus").body();
		assertThat(scrape).contains("gateway_lb_picks_total{endpoint=\"" + c + "\",service=\"ops\"}")
			.contains("gateway_lb_inflight{endpoint=\"" + c + "\",service=\"ops\"}")
			.contains("gateway_lb_split_picks_total{split=\"shop\",target=\"ops\"}")
			.contains("gateway_lb_refreshes_total{outcome=\"applied\"}")
			.contains("gateway_lb_refreshes_total{outcome=\"rejected\"}");
		refresh(instances("ops", backends.subList(0, 2), 1, 1));
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			this.client.getNow("/ops/");
			assertThat(this.client.getNow("/actuator/prometheus").body())
				.doesNotContain("endpoint=\"" + c + "\",service=\"ops\"");
		});
	}

	/**
	 * Returns a whole instance list of the simple discovery client: Boot binds a list
	 * from one property source, so a refresh replaces the list, not one element.
	 */
	private static Map<String, Object> instances(String service, List<TestBackend> backends, int... weights) {
		Map<String, Object> properties = new HashMap<>();
		for (int i = 0; i < backends.size(); i++) {
			String instance = "spring.cloud.discovery.client.simple.instances." + service + "[" + i + "]";
			properties.put(instance + ".uri", backends.get(i).uri());
			properties.put(instance + ".instance-id", backends.get(i).name());
			properties.put(instance + ".metadata.weight", weights[i]);
		}
		return properties;
	}

	private Map<String, Integer> countOver(int requests, AtomicLong served) {
		int[] before = backends.stream().mapToInt(TestBackend::requests).toArray();
		long start = served.get();
		await().until(() -> served.get() - start >= requests);
		Map<String, Integer> counts = new HashMap<>();
		int total = 0;
		for (int i = 0; i < backends.size(); i++) {
			int count = backends.get(i).requests() - before[i];
			counts.put(backends.get(i).name(), count);
			total += count;
		}
		// Normalize to exactly `requests` for readable shares.
		int scale = total;
		counts.replaceAll((name, count) -> Math.round(count * (float) requests / scale));
		return counts;
	}

	private int[] inFlightPerEndpoint(String service) {
		var snapshot = this.runtimes.snapshot(service);
		if (snapshot == null) {
			return new int[0];
		}
		int[] counts = new int[snapshot.size()];
		for (int i = 0; i < counts.length; i++) {
			counts[i] = snapshot.state(i).inFlight();
		}
		return counts;
	}

	private void refresh(Map<String, Object> properties) {
		this.overrides.putAll(properties);
		this.context.getEnvironment().getPropertySources().remove("overrides");
		this.context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("overrides", Map.copyOf(this.overrides)));
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, properties.keySet()));
	}

	private JsonNode json(String path) {
		GatewayClient.Answer answer = this.client.getNow(path);
		assertThat(answer.status()).as(path).isEqualTo(200);
		return JsonMapper.builder().build().readTree(answer.body());
	}

}
