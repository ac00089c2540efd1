package dev.gatewaylb.gateway;

import dev.gatewaylb.internal.settings.LiveSettings;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;

import dev.gatewaylb.internal.split.StickyCookie;
import dev.gatewaylb.internal.split.Split;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Canary and blue-green splits in front of real backends.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SplitIT extends GatewayIntegrationTest {

	static final List<TestBackend> stable = List.of(TestBackend.start("stable-1"), TestBackend.start("stable-2"));

	static final List<TestBackend> canary = List.of(TestBackend.start("canary-1"), TestBackend.start("canary-2"));

	static final List<TestBackend> blue = List.of(TestBackend.start("blue"));

	static final List<TestBackend> green = List.of(TestBackend.start("green"));

	static final HealthBackend failing = HealthBackend.start("failing");

	static {
		failing.status(503);
	}

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("shop")
			.instances("shop-stable", stable)
			.instances("shop-canary", canary)
			.set("gateway.lb.splits.shop.targets.shop-stable", 90)
			.set("gateway.lb.splits.shop.targets.shop-canary", 10)
			.set("gateway.lb.splits.shop.sticky.cookie", "GWLB_AFFINITY")
			.set("gateway.lb.splits.shop.sticky.max-age", "1h")
			.set("gateway.lb.splits.shop.sticky.same-site", "strict")
			.set("gateway.lb.splits.shop.override-header", "X-Gateway-Target")
			// The test client connects from loopback: trusted to override shop's target.
			.set("gateway.lb.splits.shop.override-trusted-clients[0]", "127.0.0.1/32")
			.route("flip")
			.instances("flip-blue", blue)
			.instances("flip-green", green)
			.set("gateway.lb.splits.flip.targets.flip-blue", 100)
			.set("gateway.lb.splits.flip.targets.flip-green", 0)
			.set("gateway.lb.splits.flip.override-header", "X-Gateway-Target")
			// flip's testers sit behind a proxy (the test client) in 203.0.113.0/24.
			.set("gateway.lb.splits.flip.override-trusted-clients[0]", "203.0.113.0/24")
			.set("gateway.lb.trusted-proxies[0]", "127.0.0.1/32")
			.route("retried")
			.filter("Retry=2")
			.set("gateway.lb.splits.retried.targets.retried-target", 1)
			.set("gateway.lb.splits.retried.override-header", "X-Gateway-Target")
			.uris("retried-target", List.of(failing.uri()))
			.set("gateway.lb.services.retried-target.retry.attempts", 0)
			.set("gateway.lb.services.retried-target.health.passive.consecutive-failures", 0)
			.route("pinned")
			.instances("pinned-all", List.of(stable.get(0), stable.get(1), canary.get(0), canary.get(1)))
			.set("gateway.lb.services.pinned-all.algorithm", "consistent-hash")
			.set("gateway.lb.splits.pinned.targets.pinned-all", 1)
			.set("gateway.lb.splits.pinned.sticky.cookie", "PIN");
	}

	@Autowired
	ConfigurableApplicationContext context;

	@Autowired
	LiveSettings settings;

	@AfterEach
	void restoreSettings() {
		if (this.context.getEnvironment().getPropertySources().remove("refreshed") != null) {
			refresh();
		}
	}

	@AfterAll
	static void stopBackends() {
		List.of(stable, canary, blue, green).forEach((backends) -> backends.forEach(TestBackend::close));
		failing.close();
	}

	@Test
	void splitsAffinityValuesByTheirStableHashWithinFiveStandardDeviations() {
		Split shop = Split.of("shop",
				List.of(new Split.Target("shop-stable", 90), new Split.Target("shop-canary", 10)));
		List<String> keys = seededAffinityValues(2_000);
		List<GatewayClient.Answer> answers = Flux.fromIterable(keys)
			.flatMapSequential((key) -> this.client.get("/shop/", Map.of("Cookie", "GWLB_AFFINITY=" + key)), 16)
			.collectList()
			.block(Duration.ofSeconds(60));
		long expected = 0;
		for (int i = 0; i < keys.size(); i++) {
			String target = shop.targets().get(shop.pick(keys.get(i))).service();
			assertThat(answers.get(i).status()).isEqualTo(200);
			assertThat("shop-" + target(answers.get(i))).as("the target of %s", keys.get(i)).isEqualTo(target);
			assertThat(answers.get(i).setCookies()).as("a valid cookie is kept").isEmpty();
			expected += target.equals("shop-canary") ? 1 : 0;
		}
		long toCanary = answers.stream().filter((answer) -> answer.backend().startsWith("canary")).count();
		assertThat(toCanary).isEqualTo(expected);
		// The keys are fixed, so is the count; the band says that the hash spreads the
		// values a burst of new clients gets as a fair coin would.
		double sigma = Math.sqrt(2_000 * 0.1 * 0.9);
		assertThat((double) toCanary).isBetween(200 - 5 * sigma, 200 + 5 * sigma);
	}

	@Test
	void splitsARequestWithoutACookieByTheValueItIsGiven() {
		Split shop = Split.of("shop",
				List.of(new Split.Target("shop-stable", 90), new Split.Target("shop-canary", 10)));
		List<GatewayClient.Answer> answers = Flux.range(0, 200)
			.flatMap((i) -> this.client.get("/shop/", Map.of()), 16)
			.collectList()
			.block(Duration.ofSeconds(60));
		assertThat(answers).allSatisfy((answer) -> {
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.setCookies()).hasSize(1);
			String value = cookieValue(answer, "GWLB_AFFINITY");
			assertThat(StickyCookie.isValid(value)).isTrue();
			// The first answer already comes from the target the cookie keeps the client
			// on.
			assertThat("shop-" + target(answer)).as("the target of %s", value)
				.isEqualTo(shop.targets().get(shop.pick(value)).service());
		});
	}

	@Test
	void keepsAClientWithItsCookieOnOneTargetWithoutSettingItAgain() {
		Map<String, Integer> targets = new HashMap<>();
		for (int client = 0; client < 10; client++) {
			GatewayClient.Answer first = this.client.getNow("/shop/");
			String cookie = "GWLB_AFFINITY=" + cookieValue(first, "GWLB_AFFINITY");
			String target = target(first);
			for (int i = 0; i < 30; i++) {
				GatewayClient.Answer next = this.client.getNow("/shop/", Map.of("Cookie", "theme=dark; " + cookie));
				assertThat(target(next)).isEqualTo(target);
				assertThat(next.setCookies()).isEmpty();
			}
			targets.merge(target, 1, Integer::sum);
		}
		assertThat(targets.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(10);
	}

	@Test
	void setsTheCookieWithTheConfiguredAttributes() {
		String setCookie = this.client.getNow("/shop/").setCookies().get(0);
		Map<String, String> attributes = new HashMap<>();
		for (String attribute : setCookie.split(";")) {
			String[] pair = attribute.trim().split("=", 2);
			attributes.put(pair[0].toLowerCase(java.util.Locale.ROOT), (pair.length > 1) ? pair[1] : "");
		}
		assertThat(StickyCookie.isValid(attributes.get("gwlb_affinity"))).isTrue();
		assertThat(attributes).containsEntry("path", "/")
			.containsEntry("max-age", "3600")
			.containsEntry("samesite", "Strict")
			.containsKeys("httponly", "expires")
			.doesNotContainKey("secure");
	}

	@Test
	void replacesAMalformedCookieValue() {
		for (String malformed : List.of("nope", "019AD2F36C1E00000000002A", "\"\"", "x".repeat(400))) {
			GatewayClient.Answer answer = this.client.getNow("/shop/", Map.of("Cookie", "GWLB_AFFINITY=" + malformed));
			assertThat(answer.status()).isEqualTo(200);
			assertThat(StickyCookie.isValid(cookieValue(answer, "GWLB_AFFINITY"))).isTrue();
		}
	}

	@Test
	void followsTheOverrideHeaderOfATrustedClientForItsOwnTargetsOnlyAndStripsIt() {
		for (int i = 0; i < 20; i++) {
			assertThat(target(this.client.getNow("/shop/", Map.of("X-Gateway-Target", "shop-canary"))))
				.isEqualTo("canary");
		}
		GatewayClient.Answer ignored = this.client.getNow("/shop/", Map.of("X-Gateway-Target", "flip-green"));
		assertThat(ignored.status()).isEqualTo(200);
		assertThat(ignored.backend()).matches("(stable|canary)-.");
		assertThat(List.of(stable, canary)).allSatisfy(
				(backends) -> assertThat(backends).noneMatch((backend) -> backend.sawHeader("X-Gateway-Target")));
	}

	@Test
	void ignoresAndStripsTheOverrideHeaderOfAnUntrustedClient() {
		// flip-green has weight 0: only an override could reach it.
		int greenBefore = green.get(0).requests();
		for (Map<String, String> headers : List.of(Map.of("X-Gateway-Target", "flip-green"),
				Map.of("X-Gateway-Target", "flip-green", "X-Forwarded-For", "198.51.100.7"),
				Map.of("X-Gateway-Target", "flip-green", "X-Forwarded-For", "203.0.113.9, 198.51.100.7"))) {
			for (int i = 0; i < 10; i++) {
				assertThat(this.client.getNow("/flip/", headers).backend()).as(headers.toString()).isEqualTo("blue");
			}
		}
		assertThat(blue.get(0).sawHeader("X-Gateway-Target")).isFalse();
		assertThat(green.get(0).requests()).isEqualTo(greenBefore);
	}

	@Test
	void honoursTheOverrideHeaderOfATrustedClientBehindATrustedProxyAndStripsIt() {
		Map<String, String> headers = Map.of("X-Gateway-Target", "flip-green", "X-Forwarded-For", "203.0.113.9");
		for (int i = 0; i < 10; i++) {
			assertThat(this.client.getNow("/flip/", headers).backend()).isEqualTo("green");
		}
		assertThat(green.get(0).sawHeader("X-Gateway-Target")).isFalse();
	}

	@Test
	void stripsTheOverrideHeaderFromEveryAttemptOfTheRoutesOwnRetryFilter() {
		int before = failing.requests();
		GatewayClient.Answer answer = this.client.getNow("/retried/", Map.of("X-Gateway-Target", "retried-target"));
		assertThat(answer.status()).isEqualTo(503);
		assertThat(failing.requests() - before).as("the first attempt and the route's two retries").isEqualTo(3);
		assertThat(failing.sawHeader("X-Gateway-Target")).isFalse();
	}

	@Test
	void marksTheCookieSecureWhenATrustedProxySaysTheClientCameOverHttps() {
		String setCookie = this.client.getNow("/shop/", Map.of("X-Forwarded-Proto", "https")).setCookies().get(0);
		assertThat(setCookie).containsIgnoringCase("; Secure");
		assertThat(this.client.getNow("/shop/", Map.of("X-Forwarded-Proto", "http")).setCookies().get(0))
			.doesNotContainIgnoringCase("secure");
	}

	@Test
	void followsAWeightChangeFromTheVeryNextRequestAfterARefresh() {
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/flip/").backend()).isEqualTo("blue");
		}
		long generation = this.settings.generation();
		refresh(Map.of("gateway.lb.splits.flip.targets.flip-blue", 0, "gateway.lb.splits.flip.targets.flip-green",
				100));
		assertThat(this.settings.generation()).isEqualTo(generation + 1);
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/flip/").backend()).isEqualTo("green");
		}
	}

	@Test
	void rejectsAnInvalidRefreshWholeAndKeepsServing() {
		long generation = this.settings.generation();
		refresh(Map.of("gateway.lb.splits.flip.targets.flip-blue", 0, "gateway.lb.splits.flip.targets.flip-green", 0));
		assertThat(this.settings.generation()).isEqualTo(generation);
		assertThat(this.settings.lastError()).contains("gateway.lb.splits.flip.targets");
		assertThat(this.client.getNow("/flip/").backend()).isEqualTo("blue");
	}

	@Test
	void pinsOneEndpointPerCookieWhenTheTargetHashesConsistently() {
		Set<String> endpoints = new HashSet<>();
		for (String value : seededAffinityValues(12)) {
			String cookie = "PIN=" + value;
			String first = this.client.getNow("/pinned/", Map.of("Cookie", cookie)).backend();
			for (int i = 0; i < 5; i++) {
				assertThat(this.client.getNow("/pinned/", Map.of("Cookie", cookie)).backend()).isEqualTo(first);
			}
			endpoints.add(first);
		}
		assertThat(endpoints).as("12 sessions over four endpoints").hasSizeGreaterThanOrEqualTo(2);
	}

	/**
	 * Returns affinity values as one replica mints them for a burst of new clients (one
	 * millisecond, consecutive counters from a random start), from a fixed instant and a
	 * seeded start, so that every run sends the same keys.
	 */
	static List<String> seededAffinityValues(int count) {
		StickyCookie minter = new StickyCookie(() -> 0x019ad2f36c1eL, new Random(21).nextLong() & 0xffffffffffffL);
		return IntStream.range(0, count).mapToObj((i) -> minter.mint()).toList();
	}

	private void refresh(Map<String, Object> properties) {
		this.context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("refreshed", properties));
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, properties.keySet()));
	}

	private void refresh() {
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, Set.of("gateway.lb.splits")));
	}

	private static String target(GatewayClient.Answer answer) {
		return answer.backend().substring(0, answer.backend().indexOf('-'));
	}

	private static String cookieValue(GatewayClient.Answer answer, String name) {
		assertThat(answer.setCookies()).isNotEmpty();
		String setCookie = answer.setCookies().get(0);
		assertThat(setCookie).startsWith(name + "=");
		return setCookie.substring(name.length() + 1, setCookie.indexOf(';'));
	}

}
