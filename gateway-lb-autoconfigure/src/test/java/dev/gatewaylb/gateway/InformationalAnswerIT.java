package dev.gatewaylb.gateway;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An endpoint that sends {@code 103 Early Hints} before each answer, over one kept-alive
 * HTTP/1.1 connection: the client gets the answer, every time (before, the exchange ended
 * on the 103 and the client waited for ever).
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class InformationalAnswerIT extends GatewayIntegrationTest {

	static final EarlyHints backend = new EarlyHints();

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
		for (int i = 0; i < 5; i++) {
			GatewayClient.Answer answer = this.client.getNow("/hinted/page");
			assertThat(answer.status()).as("answer %s", i).isEqualTo(200);
			assertThat(answer.body()).isEqualTo("page " + i);
		}
		assertThat(backend.connections()).as("connections the five answers took").isEqualTo(1);
	}

	/**
	 * A backend on a plain socket: {@code 103} with a {@code Link} header, then
	 * {@code 200} with a body that counts the requests, on a connection kept alive.
	 */
	static final class EarlyHints implements AutoCloseable {

		private final ServerSocket listener;

		private final AtomicInteger requests = new AtomicInteger();

		private final List<Socket> accepted = new CopyOnWriteArrayList<>();

		EarlyHints() {
			try {
				this.listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
			Thread acceptor = new Thread(this::accept, "early-hints");
			acceptor.setDaemon(true);
			acceptor.start();
		}

		private void accept() {
			while (!this.listener.isClosed()) {
				try {
					Socket socket = this.listener.accept();
					this.accepted.add(socket);
					Thread serving = new Thread(() -> serve(socket), "early-hints-connection");
					serving.setDaemon(true);
					serving.start();
				}
				catch (IOException closed) {
					return;
				}
			}
		}

		private void serve(Socket socket) {
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
					String body = "page " + this.requests.getAndIncrement();
					out.write(("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n"
							+ "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + body.length()
							+ "\r\n\r\n" + body)
						.getBytes(StandardCharsets.ISO_8859_1));
					out.flush();
				}
			}
			catch (IOException closed) {
				// the gateway closed the connection
			}
		}

		int port() {
			return this.listener.getLocalPort();
		}

		int connections() {
			return this.accepted.size();
		}

		@Override
		public void close() throws IOException {
			this.listener.close();
			for (Socket socket : this.accepted) {
				socket.close();
			}
		}

	}

}
