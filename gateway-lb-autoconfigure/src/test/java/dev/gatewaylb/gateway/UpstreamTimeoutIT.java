package dev.gatewaylb.gateway;

import java.io.IOException;
import java.net.InetAddress;
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

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each upstream's own timeouts: connect (to an address that never answers, and to one
 * that refuses), response headers, and the gap between two chunks of the body.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UpstreamTimeoutIT extends GatewayIntegrationTest {

	static final TestBackend slow = TestBackend.start("slow");

	static final Blackhole blackhole = new Blackhole();

	static final int refusingPort = freePort();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("headers")
			.instances("headers", List.of(slow))
			.set("gateway.lb.services.headers.timeouts.response", "300ms")
			.route("queued")
			.instances("queued", List.of(slow))
			.set("gateway.lb.services.queued.pool.max-connections", 1)
			.set("gateway.lb.services.queued.pool.max-pending", 10)
			.set("gateway.lb.services.queued.timeouts.response", "500ms")
			.route("idle")
			.instances("idle", List.of(slow))
			.set("gateway.lb.services.idle.timeouts.body-idle", "300ms")
			.route("blackhole")
			.set("spring.cloud.discovery.client.simple.instances.blackhole[0].uri",
					"http://127.0.0.1:" + blackhole.port())
			.set("gateway.lb.services.blackhole.timeouts.connect", "500ms")
			.route("refusing")
			.set("spring.cloud.discovery.client.simple.instances.refusing[0].uri", "http://127.0.0.1:" + refusingPort);
	}

	@AfterAll
	static void stopBackends() throws IOException {
		slow.close();
		blackhole.close();
	}

	@Test
	void answers502WhenTheConnectTimeoutPassesWithoutAnAnswer() {
		// The blackhole must really swallow connects, or this test proves nothing.
		assertThat(blackhole.swallows(200)).as("a raw connect to the blackhole hangs").isTrue();
		// The first request also builds the service's balancer: time a second one. Bound
		// both waits, since without a connect timeout each would hang for the gateway's
		// default 45 s.
		this.client.get("/blackhole/", Map.of()).block(Duration.ofSeconds(5));

		long start = System.nanoTime();
		GatewayClient.Answer answer = this.client.get("/blackhole/", Map.of()).block(Duration.ofSeconds(5));
		long millis = (System.nanoTime() - start) / 1_000_000;

		assertThat(answer.status()).isEqualTo(502);
		// Not before the 500 ms timeout (an immediate failure is something else), and
		// not much after it: room for one retry of the single endpoint and a slow box.
		assertThat(millis).isBetween(450L, 2_000L);
	}

	@Test
	void answers502AtOnceWhenTheUpstreamRefusesTheConnection() {
		this.client.getNow("/refusing/");

		long start = System.nanoTime();
		GatewayClient.Answer answer = this.client.getNow("/refusing/");
		long millis = (System.nanoTime() - start) / 1_000_000;

		assertThat(answer.status()).isEqualTo(502);
		assertThat(millis).isLessThan(1_000L);
	}

	@Test
	void answers504WhenTheHeadersComeLaterThanTheResponseTimeout() {
		this.client.getNow("/headers/warm-up?delay=0");

		long start = System.nanoTime();
		GatewayClient.Answer answer = this.client.getNow("/headers/late?delay=2000");
		long millis = (System.nanoTime() - start) / 1_000_000;

		assertThat(answer.status()).isEqualTo(504);
		assertThat(millis).as("the 300 ms deadline, not the backend's 2 s").isBetween(250L, 1_500L);
		assertThat(this.client.getNow("/headers/in-time?delay=100").status()).isEqualTo(200);
	}

	@Test
	void waitsForAConnectionWithoutSpendingTheHeaderDeadlineOrChargingTheEndpoint() {
		// One connection, 400 ms answers, a 500 ms header deadline: three requests queue
		// for the connection for up to 800 ms, yet each gets its headers 400 ms after it
		// was sent.
		List<GatewayClient.Answer> answers = reactor.core.publisher.Flux.range(0, 3)
			.flatMap((i) -> this.client.get("/queued/?delay=400", java.util.Map.of()), 3)
			.collectList()
			.block(java.time.Duration.ofSeconds(10));
		assertThat(answers).extracting(GatewayClient.Answer::status).containsOnly(200);
		dev.gatewaylb.internal.balance.Snapshot<?> snapshot = this.runtimes.snapshot("queued");
		assertThat(snapshot.state(0).consecutiveFailures()).as("no failure charged").isZero();
		assertThat(snapshot.state(0).ejections()).isZero();
	}

	@Test
	void cutsOffABodyThatGoesIdleLongerThanTheBodyIdleTimeout() {
		this.client.getNow("/idle/warm-up?delay=0");

		long start = System.nanoTime();
		// 10 of 100 declared bytes at once, the other 90 only after 3 s.
		GatewayClient.Transfer transfer = this.client.receive("/idle/stalled?stall=3000");
		long millis = (System.nanoTime() - start) / 1_000_000;

		assertThat(transfer.status()).as("the headers went out before the stall").isEqualTo(200);
		assertThat(transfer.received()).as("fewer bytes than the 100 the backend declared").isLessThan(100);
		// A clean end would tell the client that 10 bytes were the whole body.
		assertThat(transfer.error()).as("the client sees the body cut off").isNotNull();
		assertThat(millis).as("cut at the 300 ms idle gap, not at the backend's 3 s").isLessThan(2_000L);
	}

	@Test
	void keepsABodyWhoseChunksComeMoreOftenThanTheBodyIdleTimeout() {
		this.client.getNow("/idle/warm-up?delay=0");

		// 10 chunks, one every 100 ms: 1 s in all, three times the 300 ms idle timeout.
		GatewayClient.Transfer transfer = this.client.receive("/idle/trickle?chunks=10&gap=100");

		assertThat(transfer.status()).isEqualTo(200);
		assertThat(transfer.error()).as("a trickling body is not cut").isNull();
		assertThat(transfer.received()).isEqualTo(expectedChunkBytes("slow", 10));
	}

	@Test
	void leavesTheWaitForHeadersToTheResponseTimeoutOnAReusedConnection() {
		// Sequential requests reuse one pooled connection: an idle timer left on it
		// by an earlier body would cut the next request while it waits for headers.
		for (int i = 0; i < 3; i++) {
			assertThat(this.client.getNow("/idle/quick").status()).isEqualTo(200);
		}
		GatewayClient.Answer answer = this.client.getNow("/idle/slow-headers?delay=1000");

		assertThat(answer.status()).as("headers after 1 s, within timeouts.response (30 s)").isEqualTo(200);
		assertThat(answer.body()).isEqualTo("slow");
	}

	/**
	 * Returns the length of TestBackend's chunked body: {@code <name><index>\n} per
	 * chunk.
	 */
	private static long expectedChunkBytes(String name, int chunks) {
		long bytes = 0;
		for (int i = 0; i < chunks; i++) {
			bytes += (name + i + "\n").length();
		}
		return bytes;
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByAddress(new byte[] { 127, 0, 0, 1 }))) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A listening socket on 127.0.0.1 that never accepts, with its accept queue full.
	 * <p>
	 * Linux completes a handshake into a listener's accept queue, which holds
	 * {@code backlog + 1} connections. Once it is full the kernel drops every further SYN
	 * (it sends no RST while {@code net.ipv4.tcp_abort_on_overflow} is 0, the default,
	 * and SYN cookies do not apply to a full accept queue), so the client retransmits its
	 * SYN and its connect hangs until its own timeout: a non-answering address built on
	 * loopback, without root or iptables. Filling goes on until a filler's own connect
	 * times out, which is that behaviour observed.
	 */
	static final class Blackhole implements AutoCloseable {

		private static final InetAddress LOOPBACK = loopback();

		private final ServerSocket server;

		private final List<Socket> fillers = new ArrayList<>();

		Blackhole() {
			try {
				this.server = new ServerSocket(0, 1, LOOPBACK);
				int connects = 0;
				while (!swallows(200)) {
					if (++connects == 16) {
						throw new IllegalStateException("16 connects to a full accept queue did not hang");
					}
				}
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		int port() {
			return this.server.getLocalPort();
		}

		/**
		 * Tries one connect; returns whether it timed out. A connect that succeeds stays
		 * open, as one more connection in the accept queue.
		 */
		boolean swallows(int timeoutMillis) {
			Socket socket = new Socket();
			try {
				socket.connect(new InetSocketAddress(LOOPBACK, port()), timeoutMillis);
				this.fillers.add(socket);
				return false;
			}
			catch (SocketTimeoutException ex) {
				closeQuietly(socket);
				return true;
			}
			catch (IOException ex) {
				closeQuietly(socket);
				throw new IllegalStateException("connect to the blackhole failed", ex);
			}
		}

		@Override
		public void close() throws IOException {
			this.fillers.forEach(Blackhole::closeQuietly);
			this.server.close();
		}

		/**
		 * Returns 127.0.0.1 whatever the JVM prefers, as the instance's URI names it.
		 */
		private static InetAddress loopback() {
			try {
				return InetAddress.getByAddress("localhost", new byte[] { 127, 0, 0, 1 });
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		private static void closeQuietly(Socket socket) {
			try {
				socket.close();
			}
			catch (IOException ex) {
				// nothing to release
			}
		}

	}

}
