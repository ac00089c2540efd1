package dev.gatewaylb.gateway;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks {@link HeadlessChromium} against a page that renders late and keeps changing, as
 * a dashboard does: the test has to wait for what the script draws, not for the load.
 */
@ExtendWith(HeadlessChromium.Required.class)
class HeadlessChromiumIT {

	private static final String PAGE = """
			<!DOCTYPE html>
			<html>
			<head><meta charset="utf-8"><title>headless chromium</title></head>
			<body>
			<h1>gateway-lb</h1>
			<script>
			window.addEventListener('load', () => setTimeout(() => {
				const count = document.createElement('p');
				count.id = 'count';
				count.textContent = '0';
				document.body.append(count);
				setInterval(() => count.textContent = String(Number(count.textContent) + 1), 200);
			}, 300));
			</script>
			</body>
			</html>
			""";

	private static final Duration RENDER_TIMEOUT = Duration.ofSeconds(10);

	private static @Nullable DisposableServer server;

	private static @Nullable HeadlessChromium browser;

	@BeforeAll
	static void start() throws Exception {
		server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route((routes) -> routes.get("/",
					(request, response) -> response.header("Content-Type", "text/html; charset=utf-8")
						.sendString(Mono.just(PAGE))))
			.bindNow();
		browser = HeadlessChromium.launch();
	}

	@AfterAll
	static void stop() {
		try {
			if (browser != null) {
				browser.close();
			}
		}
		finally {
			if (server != null) {
				server.disposeNow();
			}
		}
	}

	@Test
	void readsWhatTheScriptRendersAndScreenshotsIt() throws Exception {
		HeadlessChromium browser = HeadlessChromiumIT.browser;
		DisposableServer server = HeadlessChromiumIT.server;
		assertThat(browser).isNotNull();
		assertThat(server).isNotNull();
		browser.navigate("http://127.0.0.1:" + server.port() + "/");
		assertThat(browser.evaluate("document.querySelector('h1').textContent").asString()).isEqualTo("gateway-lb");
		browser.await("document.getElementById('count') !== null", RENDER_TIMEOUT);
		int first = count(browser);
		browser.await("Number(document.getElementById('count').textContent) > " + first, RENDER_TIMEOUT);
		assertThat(count(browser)).isGreaterThan(first);
		Path screenshot = Path.of("target", "headless-chromium-it.png");
		browser.screenshot(screenshot);
		byte[] png = Files.readAllBytes(screenshot);
		assertThat(png).startsWith(0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n');
		assertThat(png.length).isGreaterThan(500);
	}

	private static int count(HeadlessChromium browser) throws Exception {
		return browser.evaluate("Number(document.getElementById('count').textContent)").asInt();
	}

}
