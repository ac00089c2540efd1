package dev.gatewaylb.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A backend sees the same request target through the starter as through plain Spring
 * Cloud Gateway {@code lb://}: both gateways run in this JVM, on one backend that echoes
 * the target it received, and a corpus of targets (the odd ones a client may send: empty
 * query parameters, an empty {@code ?}, {@code =v}, {@code //} in the path, encoded
 * characters) goes through each as raw bytes on a socket, so no client normalizes them
 * first.
 */
class RequestTargetParityIT {

	private static final List<String> TARGETS = List.of("/a", "/a/b?x=1&y=2", "/a?", "/a?&&a=1&&", "/a?=v", "/a//b",
			"//a", "/a//b//?c=1", "/a?x=", "/a?x", "/a?x=1&x=2", "/a%20b?q=%2F%3D", "/a?q=a+b", "/a;p=1/b", "/a?q==",
			"/a?x=1&=2&y=", "/%7Ea", "/a/./b", "/a?q=%E2%82%AC", "/a?redirect=http://x/y?z=1");

	private static DisposableServer backend;

	private static ConfigurableApplicationContext plain;

	private static ConfigurableApplicationContext starter;

	@BeforeAll
	static void start() {
		backend = TestBackend.bind(HttpServer.create()
			.host("127.0.0.1")
			.handle((request, response) -> response.header("X-Target", request.uri()).send()));
		plain = gateway(false);
		starter = gateway(true);
	}

	@AfterAll
	static void stop() {
		starter.close();
		plain.close();
		backend.disposeNow();
	}

	@Test
	void theBackendSeesTheTargetPlainSpringCloudGatewaySends() throws IOException {
		Map<String, String> viaPlain = new LinkedHashMap<>();
		Map<String, String> viaStarter = new LinkedHashMap<>();
		for (String target : TARGETS) {
			viaPlain.put(target, targetSeenByBackend(port(plain), target));
			viaStarter.put(target, targetSeenByBackend(port(starter), target));
		}
		assertThat(viaPlain).as("plain Spring Cloud Gateway reached the backend").doesNotContainValue(null);
		assertThat(viaStarter).isEqualTo(viaPlain);
		// The corpus holds targets plain Spring Cloud Gateway rewrites, so that the
		// comparison above compares something.
		assertThat(viaPlain.get("/a?&&a=1&&")).isEqualTo("/a?a=1");
		assertThat(viaPlain.get("/a//b")).isEqualTo("/a/b");
	}

	private static ConfigurableApplicationContext gateway(boolean withStarter) {
		return new SpringApplicationBuilder(TestGateway.class)
			.properties("server.port=0", "server.address=127.0.0.1", "gateway.lb.enabled=" + withStarter,
					"spring.cloud.gateway.server.webflux.routes[0].id=corpus",
					"spring.cloud.gateway.server.webflux.routes[0].uri=lb://corpus",
					"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/**",
					"spring.cloud.discovery.client.simple.instances.corpus[0].uri=http://127.0.0.1:" + backend.port())
			.run();
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	/**
	 * Sends {@code GET target} as raw bytes and returns the target the backend echoed, or
	 * {@code null} when the answer had none (the gateway answered itself).
	 */
	private static String targetSeenByBackend(int port, String target) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			String head = head(socket.getInputStream());
			for (String line : head.split("\r\n")) {
				if (line.regionMatches(true, 0, "X-Target:", 0, 9)) {
					return line.substring(9).trim();
				}
			}
			return null;
		}
	}

	private static String head(InputStream in) throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		int matched = 0;
		int b;
		while (matched < 4 && (b = in.read()) >= 0) {
			head.write(b);
			matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : ((b == '\r') ? 1 : 0);
		}
		return head.toString(StandardCharsets.US_ASCII);
	}

}
