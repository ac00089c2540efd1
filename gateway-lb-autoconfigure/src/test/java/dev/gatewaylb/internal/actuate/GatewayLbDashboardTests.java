package dev.gatewaylb.internal.actuate;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The dashboard page's headers: a Content-Security-Policy that names the page's one
 * script and one style sheet by their hashes and allows nothing else inline, Trusted
 * Types with no policy, no referrer and no caching.
 */
class GatewayLbDashboardTests {

	@Test
	void thePolicyAllowsThePagesOwnScriptAndStyleByTheirHashesAndNothingInline() throws Exception {
		String page = page();
		String policy = GatewayLbDashboard.contentSecurityPolicy(page);
		assertThat(policy).doesNotContain("unsafe-inline", "unsafe-eval", "*")
			.contains("script-src " + sha256(between(page, "<script>", "</script>")) + ";")
			.contains("style-src " + sha256(between(page, "<style>", "</style>")) + ";")
			.contains("default-src 'none'", "require-trusted-types-for 'script'", "trusted-types 'none'",
					"base-uri 'none'", "form-action 'none'");
	}

	@Test
	void aPageWithASecondScriptHasNoPolicy() {
		assertThatIllegalStateException()
			.isThrownBy(() -> GatewayLbDashboard
				.contentSecurityPolicy("<style>a{}</style><script>1</script><script>2</script>"))
			.withMessageContaining("one <script> element");
		assertThatIllegalStateException()
			.isThrownBy(() -> GatewayLbDashboard.contentSecurityPolicy("<script>1</script>"))
			.withMessageContaining("one <style> element");
	}

	@Test
	void aBrowserGetsThePageWithItsPolicyNoReferrerAndNoCaching() throws Exception {
		GatewayLbDashboard dashboard = new GatewayLbDashboard(() -> "/actuator/gatewaylb");
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.get("/actuator/gatewaylb").header(HttpHeaders.ACCEPT, "text/html"));
		WebHandler handler = (WebHandler) dashboard.getHandler(exchange).block(Duration.ofSeconds(5));
		assertThat(handler).isNotNull();
		handler.handle(exchange).block(Duration.ofSeconds(5));
		HttpHeaders headers = exchange.getResponse().getHeaders();
		assertThat(headers.getFirst("Content-Security-Policy"))
			.isEqualTo(GatewayLbDashboard.contentSecurityPolicy(page()));
		assertThat(headers.getFirst("Referrer-Policy")).isEqualTo("no-referrer");
		assertThat(headers.getCacheControl()).isEqualTo("no-store");
		assertThat(headers.getFirst("X-Content-Type-Options")).isEqualTo("nosniff");
	}

	private static String page() throws Exception {
		try (InputStream in = GatewayLbDashboardTests.class.getClassLoader()
			.getResourceAsStream(GatewayLbDashboard.PAGE)) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

	private static String between(String page, String open, String close) {
		int start = page.indexOf(open) + open.length();
		return page.substring(start, page.indexOf(close, start));
	}

	private static String sha256(String text) throws Exception {
		byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
		return "'sha256-" + Base64.getEncoder().encodeToString(digest) + "'";
	}

}
