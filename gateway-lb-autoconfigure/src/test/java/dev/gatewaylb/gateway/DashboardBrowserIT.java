package dev.gatewaylb.gateway;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.rollout.RolloutAction;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.MapPropertySource;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.server.WebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The live dashboard in a real browser: headless Chromium opens
 * {@code /actuator/gatewaylb} on a gateway under traffic, and the test reads the DOM the
 * page's script rendered (a service, its endpoints, numbers that change between two
 * renders, the share chart, a split's rollout), then keeps a screenshot in
 * {@code target/dashboard.png} (the one docs/operations.md shows is a copy). Markup in
 * what the page shows (a peer's reason and origin from the bus, a rejected refresh's
 * value, which a signed-in reader is told) is drawn as text, no script runs, and the
 * page's policy holds in the browser. JSON clients and curl still get JSON.
 */
@ExtendWith(Browser.Required.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Import(DashboardBrowserIT.SignedInReaders.class)
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class DashboardBrowserIT extends GatewayIntegrationTest {

	static final List<TestBackend> catalog = List.of(TestBackend.start("catalog-1"), TestBackend.start("catalog-2"),
			TestBackend.start("catalog-3"));

	static final List<TestBackend> stable = List.of(TestBackend.start("shop-stable"));

	static final List<TestBackend> canary = List.of(TestBackend.start("shop-canary"));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("catalog")
			.instances("catalog", catalog, 3, 2, 1)
			.set("gateway.lb.services.catalog.load-reports.enabled", true)
			.route("shop")
			.instances("shop-stable", stable)
			.instances("shop-canary", canary)
			.set("gateway.lb.splits.shop.targets.shop-stable", 100)
			.set("gateway.lb.splits.shop.targets.shop-canary", 0)
			.set("gateway.lb.splits.shop.sticky.cookie", "GWLB_AFFINITY")
			.set("gateway.lb.splits.shop.rollout.target", "shop-canary")
			.set("gateway.lb.splits.shop.rollout.steps", "10,50,100")
			.set("gateway.lb.splits.shop.rollout.interval", "1h")
			.set("management.endpoints.web.exposure.include", "gatewaylb")
			.set("management.endpoint.gatewaylb.access", "unrestricted");
	}

	@LocalServerPort
	int port;

	@Autowired
	SplitRollouts rollouts;

	@Autowired
	ConfigurableApplicationContext context;

	/**
	 * Every reader of this context is signed in, as an operator behind Spring Security
	 * would be: the endpoint then tells why a refresh was rejected, and the dashboard
	 * shows it.
	 */
	@TestConfiguration
	static class SignedInReaders {

		@Bean
		WebFilter signedIn() {
			Authentication operator = UsernamePasswordAuthenticationToken.authenticated("operator", null, List.of());
			return (exchange, chain) -> chain.filter(exchange)
				.contextWrite(ReactiveSecurityContextHolder.withAuthentication(operator));
		}

	}

	@AfterAll
	static void stopBackends() {
		List.of(catalog, stable, canary).forEach((backends) -> backends.forEach(TestBackend::close));
	}

	@Test
	@Order(1)
	void aBrowserSeesTheLiveDashboardRenderedFromTheEndpoint() throws Exception {
		String drained = "127.0.0.1:" + catalog.get(2).port();
		assertThat(this.client
			.send("POST", "/actuator/gatewaylb/catalog", "{\"endpoint\":\"" + drained + "\",\"drain\":true}")
			.status()).isEqualTo(200);
		try (ClientLoad catalogLoad = new ClientLoad(this.client, "/catalog/", 2);
				ClientLoad shopLoad = new ClientLoad(this.client, "/shop/", 2);
				Browser browser = Browser.launch()) {
			catalogLoad.await(50);
			browser.navigate("http://127.0.0.1:" + this.port + "/actuator/gatewaylb");
			browser.await(
					"document.querySelectorAll('section.service[data-service=\"catalog\"] tr.endpoint').length == 3",
					Duration.ofSeconds(20));
			String catalogRows = "section.service[data-service=\"catalog\"] tr.endpoint";
			assertThat(text(browser, "section.service[data-service=\"catalog\"] .algorithm")).isEqualTo("round-robin");
			assertThat(browser
				.evaluate("[...document.querySelectorAll('" + catalogRows.replace("'", "\\'")
						+ "')].map((row) => row.dataset.endpoint + ' ' + row.dataset.state).join(',')")
				.asString())
				.isEqualTo("127.0.0.1:" + catalog.get(0).port() + " healthy,127.0.0.1:" + catalog.get(1).port()
						+ " healthy," + drained + " draining");
			// Two renders under traffic: the picks of the first endpoint grow.
			int renders = browser.evaluate("Number(document.body.dataset.renders)").asInt();
			long picks = Long.parseLong(text(browser, catalogRows + " td.picks"));
			browser.await("Number(document.body.dataset.renders) >= " + (renders + 2), Duration.ofSeconds(20));
			assertThat(Long.parseLong(text(browser, catalogRows + " td.picks"))).isGreaterThan(picks);
			assertThat(text(browser, catalogRows + " td.picks-per-second")).matches("[0-9.]+");
			// The catalog reads load reports; its backends send none.
			assertThat(text(browser, "section.service[data-service=\"catalog\"] .load-reports"))
				.startsWith("load reports weighing");
			assertThat(text(browser, catalogRows + " td.report-age")).isEqualTo("none yet");
			assertThat(text(browser, catalogRows + " td.load-weight")).isEqualTo("1 (mean)");
			browser.await("document.querySelectorAll('svg.share-chart[data-service=\"catalog\"] polyline.share-line')"
					+ ".length == 3", Duration.ofSeconds(10));
			assertThat(text(browser, "section.split[data-split=\"shop\"] .rollout-state")).isEqualTo("progressing");
			assertThat(text(browser, "section.split[data-split=\"shop\"] .rollout-percent")).isEqualTo("10 %");
			assertThat(browser.evaluate("document.getElementById('last-error').hidden").asBoolean()).isTrue();
			Path screenshot = Path.of("target", "dashboard.png");
			browser.screenshot(screenshot);
			assertThat(Files.size(screenshot)).isGreaterThan(10_000);
			assertThat(catalogLoad.failures() + shopLoad.failures()).isZero();
		}
		finally {
			this.client.send("POST", "/actuator/gatewaylb/catalog",
					"{\"endpoint\":\"" + drained + "\",\"drain\":false}");
		}
	}

	/**
	 * After the other test: it rolls the split's rollout back.
	 */
	@Test
	@Order(2)
	void hostileStringsFromTheFleetRenderAsTextAndNoScriptRuns() throws Exception {
		// A peer's decision from the bus carries its origin and reason as text; a broker
		// anyone can publish to may carry markup. Followed here as the bus consumer
		// would follow it.
		String reason = "<img src=x onerror=\"window.__pwned='reason'\"><b>bold</b>";
		String origin = "<script>window.__pwned='origin'</script>";
		RolloutTrack track = this.rollouts.track("shop");
		this.rollouts.follow("shop", track.plan().fingerprint(), RolloutAction.ROLL_BACK, reason, origin, true);
		Awaitility.await()
			.atMost(Duration.ofSeconds(5))
			.until(() -> this.rollouts.track("shop").status().state() == Rollout.State.ROLLED_BACK);
		// A refresh rejected for a value that is markup: its message names the value, and
		// the endpoint tells it to this context's readers, who are signed in.
		String value = "<img src=y onerror=\"window.__pwned='refresh'\">";
		Map<String, Object> rejected = Map.of("gateway.lb.trusted-proxies", value);
		this.context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("rejected", rejected));
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, rejected.keySet()));
		Awaitility.await()
			.atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(this.client.getNow("/actuator/gatewaylb").body()).contains("lastError")
				.contains("__pwned='refresh'"));
		try (Browser browser = Browser.launch()) {
			browser.navigate("http://127.0.0.1:" + this.port + "/actuator/gatewaylb");
			browser.await("document.querySelector('section.split[data-split=\"shop\"] .rollout-reason') !== null",
					Duration.ofSeconds(20));
			String shown = text(browser, "section.split[data-split=\"shop\"] .rollout-reason");
			assertThat(shown).as("the reason, as text").contains(reason).contains(origin);
			browser.await("!document.getElementById('last-error').hidden", Duration.ofSeconds(10));
			assertThat(text(browser, "#last-error")).as("the rejected refresh, as text").contains(value);
			assertThat(browser
				.evaluate("document.querySelectorAll('.rollout-reason *, ol.verdicts .detail *, img')" + ".length")
				.asInt()).as("elements made of the markup").isZero();
			assertThat(browser.evaluate("document.scripts.length").asInt()).as("the page's own script only").isOne();
			assertThat(browser.evaluate("typeof window.__pwned").asString()).isEqualTo("undefined");
			// The policy holds in the page: no string reaches an HTML sink (Trusted Types
			// with no policy), and a style attribute is not applied, while the page's own
			// styles, set through the CSSOM, are.
			assertThat(browser
				.evaluate("(() => { try { document.body.insertAdjacentHTML('beforeend', '<i>x</i>');"
						+ " return 'inserted'; } catch (e) { return e.name; } })()")
				.asString()).isEqualTo("TypeError");
			assertThat(browser
				.evaluate("(() => { const probe = document.createElement('div');"
						+ " probe.setAttribute('style', 'width: 123px'); document.body.append(probe);"
						+ " const width = getComputedStyle(probe).width; probe.remove(); return width; })()")
				.asString()).isNotEqualTo("123px");
			assertThat(
					browser.evaluate("getComputedStyle(document.querySelector('.swatch')).backgroundColor").asString())
				.as("a swatch's colour, set through the CSSOM")
				.isNotEqualTo("rgba(0, 0, 0, 0)");
		}
	}

	@AfterEach
	void forgetTheRejectedRefresh() {
		if (this.context.getEnvironment().getPropertySources().remove("rejected") != null) {
			this.context.publishEvent(new EnvironmentChangeEvent(this.context, Set.of("gateway.lb.trusted-proxies")));
		}
	}

	@Test
	void curlAndJsonClientsStillGetJson() {
		for (String accept : new String[] { "*/*", "application/json", "text/plain;q=0.5, */*;q=0.1" }) {
			Answer answer = get(accept);
			assertThat(answer.contentType()).as(accept).startsWith("application/");
			assertThat(answer.body()).as(accept).startsWith("{").contains("\"services\"");
		}
		Answer page = get("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
		assertThat(page.contentType()).isEqualTo("text/html;charset=UTF-8");
		assertThat(page.body()).startsWith("<!DOCTYPE html>")
			.as("nothing loaded from elsewhere")
			.doesNotContain("src=", "href=\"http", "@import", "url(");
		assertThat(get("text/html;q=0, application/json").body()).as("refused HTML").startsWith("{");
		assertThat(get("text/html;;=;").contentType()).as("a malformed Accept").doesNotStartWith("text/html");
	}

	private Answer get(String accept) {
		// A connection of its own per request, as curl makes: no pooled connection the
		// server may have closed in between to wait on.
		return HttpClient.newConnection()
			.headers((headers) -> headers.set("Accept", accept))
			.get()
			.uri("http://127.0.0.1:" + this.port + "/actuator/gatewaylb")
			.responseSingle((response, body) -> body.asString()
				.defaultIfEmpty("")
				.map((text) -> new Answer(response.status().code(),
						String.valueOf(response.responseHeaders().get("Content-Type")), text)))
			.block(Duration.ofSeconds(10));
	}

	private static String text(Browser browser, String selector) {
		Object text = browser
			.evaluate("(document.querySelector('" + selector.replace("'", "\\'") + "') || {}).textContent ?? null")
			.raw();
		assertThat(text).as(selector).isNotNull();
		return ((String) text).trim();
	}

	record Answer(int status, String contentType, String body) {
	}

}
