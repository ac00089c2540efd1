package dev.gatewaylb.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dial of a new connection, on real sockets: a name with an IPv4 address that
 * black-holes (a listener whose accept queue is full, so a SYN gets no answer) and an
 * IPv6 address that serves, on the same port, resolved through a DNS server of the test's
 * own; and a TLS endpoint that accepts TCP and never answers the handshake.
 * <p>
 * Every request asks for {@code Connection: close}, so each one dials afresh.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class HappyEyeballsIT extends GatewayIntegrationTest {

	static final long SERIAL_CONNECT_MILLIS = 1_000;

	static final long TLS_CONNECT_MILLIS = 300;

	static final DisposableServer ipv6 = HttpServer.create()
		.host("::1")
		.port(0)
		.handle((request, response) -> response.header("X-Backend", "ipv6")
			.header("Connection", request.uri().contains("close") ? "close" : "keep-alive")
			.sendString(Mono.just("ipv6")))
		.bindNow();

	static final BlackHole blackHole = new BlackHole(ipv6.port());

	/**
	 * Accepts TCP connections and never says a word: a TLS client waits for the server's
	 * hello for ever.
	 */
	static final SocketBackend silentTls = new SocketBackend("silent-tls", (socket) -> {
	});

	static final TestDnsServer dns = new TestDnsServer(
			Map.of("both.gwlb.test", List.of(TestDnsServer.ip("127.0.0.1"), TestDnsServer.ip("::1"))));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		String both = "http://both.gwlb.test:" + ipv6.port();
		TestGateway.properties(registry)
			.route("raced")
			.uris("raced", List.of(both))
			// Any failure charged would eject the endpoint at once.
			.set("gateway.lb.services.raced.health.passive.consecutive-failures", 1)
			.route("serial")
			.uris("serial", List.of(both))
			.set("gateway.lb.services.serial.timeouts.happy-eyeballs", "0s")
			.set("gateway.lb.services.serial.timeouts.connect", SERIAL_CONNECT_MILLIS + "ms")
			.set("gateway.lb.services.serial.retry.attempts", 0)
			.set("gateway.lb.services.serial.health.passive.consecutive-failures", 0)
			.route("silent")
			.uris("silent", List.of("https://127.0.0.1:" + silentTls.port()))
			.set("gateway.lb.services.silent.timeouts.connect", TLS_CONNECT_MILLIS + "ms")
			.set("gateway.lb.services.silent.retry.attempts", 0)
			// Counted (each failed dial is charged), never ejected within the test.
			.set("gateway.lb.services.silent.health.passive.consecutive-failures", 10)
			.route("unanswered")
			.uris("unanswered", List.of("http://silent.gwlb.test:" + ipv6.port()))
			.set("gateway.lb.services.unanswered.timeouts.connect", TLS_CONNECT_MILLIS + "ms")
			.set("gateway.lb.services.unanswered.retry.attempts", 0)
			.set("gateway.lb.services.unanswered.health.passive.consecutive-failures", 0)
			.set("gateway.lb.dns.servers", "127.0.0.1:" + dns.port())
			.set("management.endpoints.web.exposure.include", "gatewaylb");
	}

	@AfterAll
	static void stop() throws IOException {
		ipv6.disposeNow();
		blackHole.close();
		silentTls.close();
		dns.close();
	}

	@Test
	void aBlackHoledAddressCostsTheDelayWithTheRaceAndTheConnectTimeoutWithout() {
		// The race's service keeps the default timeouts.connect, 5 s: an IPv4 attempt
		// that took it all would leave nothing for IPv6, and the answer would be 502.
		for (int i = 0; i < 5; i++) {
			GatewayClient.Answer answer = this.client.getNow("/raced/?close");
			assertThat(answer.status()).as("answer %s", i).isEqualTo(200);
			assertThat(answer.backend()).isEqualTo("ipv6");
		}
		assertThat(state("raced").consecutiveFailures()).as("failures charged").isZero();
		assertThat(state("raced").timesEjected()).isZero();

		for (int i = 0; i < 2; i++) {
			long start = System.nanoTime();
			GatewayClient.Answer answer = this.client.getNow("/serial/?close");
			long millis = (System.nanoTime() - start) / 1_000_000;
			// The IPv4 attempt takes the whole of timeouts.connect: none is left for
			// IPv6.
			assertThat(answer.status()).as("answer %s", i).isEqualTo(502);
			// Not before the connect timeout: a busy machine makes it later, never
			// sooner.
			assertThat(millis).as("ms without the race").isGreaterThanOrEqualTo(SERIAL_CONNECT_MILLIS - 50);
		}
	}

	@Test
	void theActuatorShowsWhatTheNameResolvedToAndWhereEachConnectionGoes() {
		// A kept-alive connection, open while the report is read.
		assertThat(this.client.getNow("/raced/").status()).isEqualTo(200);
		String report = this.client.getNow("/actuator/gatewaylb/raced").body();
		assertThat(report).contains("\"resolvedAddresses\":[\"127.0.0.1\",\"::1\"]")
			.containsPattern("\"connections\":\\{\"\\[::1\\]:" + ipv6.port() + "\":[1-9]");
	}

	@Test
	void aTlsHandshakeThatNeverEndsIsCutAtTheConnectTimeout() {
		// One dial per request (no retry). The handshake's end is the dial's deadline
		// (TlsDialDeadlineIT shows that mechanism on a clock moved by hand); here only
		// the answer, and what each took, for the record.
		long[] millis = new long[3];
		for (int i = 0; i < millis.length; i++) {
			long start = System.nanoTime();
			// Reactor Netty's own handshake timeout is 10 s: an answer within the
			// client's 5 s is the dial's.
			GatewayClient.Answer answer = this.client.get("/silent/", Map.of()).block(Duration.ofSeconds(5));
			millis[i] = (System.nanoTime() - start) / 1_000_000;
			assertThat(answer.status()).as("answer %s", i).isEqualTo(502);
			assertThat(answer.body()).contains("upstream connect failed");
			assertThat(millis[i]).as("ms until answer %s, never before the timeout", i)
				.isGreaterThanOrEqualTo(TLS_CONNECT_MILLIS - 50);
		}
		assertThat(state("silent").consecutiveFailures()).as("failed dials charged to the endpoint")
			.isEqualTo(millis.length);
		assertThat(silentTls.accepted()).as("TCP connections the TLS endpoint accepted").isEqualTo(millis.length);
		System.out.printf("silent TLS endpoint, timeouts.connect %d ms, one dial each: 502 after %s ms%n",
				TLS_CONNECT_MILLIS, java.util.Arrays.toString(millis));
	}

	@Test
	void aNameTheDnsServerNeverAnswersIsCutAtTheConnectTimeout() {
		long start = System.nanoTime();
		// The resolver's own query timeout is 5 s: an answer within the client's 4 s is
		// the dial's timeout of 300 ms.
		GatewayClient.Answer answer = this.client.get("/unanswered/", Map.of()).block(Duration.ofSeconds(4));
		long millis = (System.nanoTime() - start) / 1_000_000;
		assertThat(answer.status()).isEqualTo(502);
		assertThat(millis).as("ms until the answer, never before the timeout")
			.isGreaterThanOrEqualTo(TLS_CONNECT_MILLIS - 50);
		assertThat(dns.questions("silent.gwlb.test")).as("questions asked").isPositive();
	}

	/**
	 * A listener on 127.0.0.1 that never accepts, its queue filled: Linux drops a SYN to
	 * a listener whose accept queue is full, so a connect gets no answer at all.
	 */
	static final class BlackHole implements AutoCloseable {

		private final ServerSocket listener;

		private final List<Socket> queued = new ArrayList<>();

		BlackHole(int port) {
			try {
				this.listener = new ServerSocket();
				this.listener.bind(new InetSocketAddress("127.0.0.1", port), 1);
				for (int i = 0; i < 16; i++) {
					Socket socket = new Socket();
					try {
						socket.connect(new InetSocketAddress("127.0.0.1", port), 300);
						this.queued.add(socket);
					}
					catch (SocketTimeoutException full) {
						socket.close();
						return;
					}
				}
				throw new IllegalStateException("the accept queue of 127.0.0.1:" + port + " never filled");
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		@Override
		public void close() throws IOException {
			for (Socket socket : this.queued) {
				socket.close();
			}
			this.listener.close();
		}

	}

}
