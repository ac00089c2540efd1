package dev.gatewaylb.gateway;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.upstream.Upstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An endpoint that sends {@code 103 Early Hints} before each answer, over one kept-alive
 * HTTP/1.1 connection: the client gets the answer, every time (before, the exchange ended
 * on the 103 and the client waited for ever).
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class InformationalAnswerIT extends GatewayIntegrationTest {

	static final AtomicInteger requests = new AtomicInteger();

	static final SocketBackend backend = new SocketBackend("early-hints", InformationalAnswerIT::hintThenAnswer);

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("hinted")
			.uris("hinted", List.of("http://127.0.0.1:" + backend.port()))
			.set("gateway.lb.services.hinted.timeouts.response", "3s")
			.set("gateway.lb.services.hinted.retry.attempts", 0);
	}

	@AfterAll
	static void stop() throws IOException {
		backend.close();
	}

	@Test
	void anEarlyHintBeforeTheAnswerIsPassedOver() {
		Upstream upstream = ready("hinted").upstream();
		// One client connection: every request runs on one of the gateway's event loops,
		// whose own upstream connection (pool.loop-affinity) it must take again.
		ConnectionProvider one = ConnectionProvider.builder("one-connection").maxConnections(1).build();
		HttpClient client = HttpClient.create(one).baseUrl("http://127.0.0.1:" + this.port);
		for (int i = 0; i < 5; i++) {
			String[] answer = client.get()
				.uri("/hinted/page")
				.responseSingle((response, body) -> body.asString()
					.map((text) -> new String[] { Integer.toString(response.status().code()), text }))
				.block(Duration.ofSeconds(10));
			assertThat(answer[0]).as("answer %s", i).isEqualTo("200");
			assertThat(answer[1]).isEqualTo("page " + i);
			// The client can have the answer before the pool has the connection back
			// (the release runs on the upstream's event loop after the last byte): a
			// request sent in that gap dials a second connection, which says nothing
			// about the 103. Once nothing is in use, a connection the 103 left usable is
			// idle in the pool, and the next request must take it.
			await().atMost(Duration.ofSeconds(5)).until(() -> upstream.counts().active() == 0);
		}
		one.disposeLater().block(Duration.ofSeconds(5));
		assertThat(backend.accepted()).as("connections the five answers took").isEqualTo(1);
	}

	/**
	 * {@code 103} with a {@code Link} header, then {@code 200} with a body that counts
	 * the requests, for each request of a connection kept alive.
	 */
	private static void hintThenAnswer(Socket socket) {
		try (socket) {
			BufferedReader in = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
			OutputStream out = socket.getOutputStream();
			String line;
			while ((line = in.readLine()) != null) {
				if (!line.isEmpty()) {
					continue;
				}
				// The end of a request's head (the test sends no bodies).
				String body = "page " + requests.getAndIncrement();
				out.write(("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n"
						+ "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + body.length() + "\r\n\r\n"
						+ body)
					.getBytes(StandardCharsets.ISO_8859_1));
				out.flush();
			}
		}
		catch (IOException closed) {
			// the gateway closed the connection
		}
	}

}
