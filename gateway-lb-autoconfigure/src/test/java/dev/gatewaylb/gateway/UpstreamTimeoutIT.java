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
import static org.awaitility.Awaitility.await;

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
			.set("gateway.lb.services.idle.timeouts.body-idle", "1s")
			.route("blackhole")
			.set("spring.cloud.discovery.client.simple.instances.blackhole[0].uri",
					"http://127.0.0.1:" + blackhole.port())
			.set("gateway.lb.services.blackhole.timeouts.connect", "500ms")
			.set("gateway.lb.services.blackhole.retry.attempts", 0)
			// A connect timeout no test waits for: a refusal must not wait for it.
			.route("refusing")
			.set("spring.cloud.discovery.client.simple.instances.refusing[0].uri", "http://127.0.0.1:" + refusingPort)
			.set("gateway.lb.services.refusing.timeouts.connect", "1m");
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
		this.client.get("/blackhole/", Map.of()).block(Duration.ofSeconds(4));

		long start = System.nanoTime();
		// Answered before the default timeouts.connect (5 s) could have passed, 8 times
		// the service's own: the only bound on how late.
		GatewayClient.Answer answer = this.client.get("/blackhole/", Map.of()).block(Duration.ofSeconds(4));
		long millis = (System.nanoTime() - start) / 1_000_000;

		assertThat(answer.status()).isEqualTo(502);
		assertThat(answer.body()).contains("upstream connect failed");
		// Not before the 500 ms timeout: an immediate failure is something else. A busy
		// machine makes it later, never earlier.
		assertThat(millis).isGreaterThanOrEqualTo(450L);
	}

	@Test
	void answers502AtOnceWhenTheUpstreamRefusesTheConnection() {
		this.client.getNow("/refusing/");

		// Its timeouts.connect is a minute: a refusal answered within the client's 10 s
		// did not wait for it.
		GatewayClient.Answer answer = this.client.get("/refusing/", Map.of()).block(Duration.ofSeconds(10));

		assertThat(answer.status()).isEqualTo(502);
		assertThat(answer.body()).contains("upstream connect failed");
	}

	@Test
	void answers504WhenTheHeadersComeLaterThanTheResponseTimeout() {
		this.client.getNow("/headers/warm-up?delay=0");
		int cancelled = slow.cancelled();

		GatewayClient.Answer answer;
		try {
			// Held until the test lets it go: only the 300 ms deadline answers it.
			answer = this.client.getNow("/headers/late?hold=1");
		}
		finally {
			slow.release();
		}

		assertThat(answer.status()).isEqualTo(504);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(
					() -> assertThat(slow.cancelled() - cancelled).as("the late request, given up").isEqualTo(1));
		assertThat(this.client.getNow("/headers/in-time?delay=0").status()).isEqualTo(200);
	}

	@Test
	void waitsForAConnectionWithoutSpendingTheHeaderDeadlineOrChargingTheEndpoint() {
		// One connection and a 500 ms header deadline. The first request has its headers
		// at once and holds the connection for 1 s while its body streams; the next two
		// wait for the connection for longer than the deadline, and are answered at once
		// when they get it. A deadline that counted the wait would answer them 504.
		this.client.getNow("/queued/warm-up?delay=0");
		await().atMost(Duration.ofSeconds(5)).until(() -> slow.active() == 0);
		slow.reset();
		var streaming = this.client.get("/queued/long?chunks=10&gap=100", Map.of()).toFuture();
		await().atMost(Duration.ofSeconds(5)).until(() -> slow.active() == 1);
		List<GatewayClient.Answer> queued = reactor.core.publisher.Flux.range(0, 2)
			.flatMap((i) -> this.client.get("/queued/" + i + "?delay=0", Map.of()), 2)
			.collectList()
			.block(Duration.ofSeconds(10));
		assertThat(streaming.join().status()).isEqualTo(200);
		assertThat(queued).extracting(GatewayClient.Answer::status).containsOnly(200);
		assertThat(slow.maxActive()).as("requests the backend held at once").isLessThanOrEqualTo(1);
		dev.gatewaylb.internal.balance.Snapshot<?> snapshot = this.runtimes.snapshot("queued");
		assertThat(snapshot.state(0).consecutiveFailures()).as("no failure charged").isZero();
		assertThat(snapshot.state(0).ejections()).isZero();
	}

	@Test
	void cutsOffABodyThatGoesIdleLongerThanTheBodyIdleTimeout() {
		this.client.getNow("/idle/warm-up?delay=0");

		// 10 of 100 declared bytes at once, the other 90 only after a minute: the client
		// (30 s) has the end of the transfer only if the 1 s idle gap cut it.
		GatewayClient.Transfer transfer = this.client.receive("/idle/stalled?stall=60000");

		assertThat(transfer.status()).as("the headers went out before the stall").isEqualTo(200);
		assertThat(transfer.received()).as("fewer bytes than the 100 the backend declared").isLessThan(100);
		// A clean end would tell the client that 10 bytes were the whole body.
		assertThat(transfer.error()).as("the client sees the body cut off").isNotNull();
	}

	@Test
	void keepsABodyWhoseChunksComeMoreOftenThanTheBodyIdleTimeout() {
		this.client.getNow("/idle/warm-up?delay=0");

		// 20 chunks, one every 100 ms: 2 s in all, twice the 1 s idle timeout, and gaps
		// a tenth of it.
		GatewayClient.Transfer transfer = this.client.receive("/idle/trickle?chunks=20&gap=100");

		assertThat(transfer.status()).isEqualTo(200);
		assertThat(transfer.error()).as("a trickling body is not cut").isNull();
		assertThat(transfer.received()).isEqualTo(expectedChunkBytes("slow", 20));
	}

	@Test
	void leavesTheWaitForHeadersToTheResponseTimeoutOnAReusedConnection() {
		// Sequential requests reuse one pooled connection: an idle timer left on it
		// by an earlier body would cut the next request while it waits for headers.
		for (int i = 0; i < 3; i++) {
			assertThat(this.client.getNow("/idle/quick").status()).isEqualTo(200);
		}
		GatewayClient.Answer answer = this.client.getNow("/idle/slow-headers?delay=2000");

		assertThat(answer.status()).as("headers after 2 s, twice body-idle, within timeouts.response (30 s)")
			.isEqualTo(200);
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
