package dev.gatewaylb.gateway;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.gateway.RequestBodyIdleIT.RawClient;
import dev.gatewaylb.gateway.RequestBodyIdleIT.RawResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Clients too slow to be the endpoint's fault, on real sockets: one that stops reading a
 * 20 MB answer is cut off after {@code response-write-idle} and charges nothing, though
 * {@code body-idle} is shorter (the endpoint is not read from while the client stalls);
 * one that reads slowly but steadily is never cut; an upload at 10 bytes a second is
 * answered 408 once the grace of {@code request-body-idle} has passed, charging nothing.
 * Each endpoint is ejected by a single failure, so any charge would show.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SlowClientsIT extends GatewayIntegrationTest {

	static final int BODY_BYTES = 20 * 1024 * 1024;

	static final long WRITE_IDLE_MILLIS = 3_000;

	static final Bulk bulk = new Bulk();

	static final RequestBodyIdleIT.Reader reader = new RequestBodyIdleIT.Reader();

	private final ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("bulk")
			.uris("bulk", List.of(bulk.uri()))
			.set("gateway.lb.services.bulk.timeouts.body-idle", "2s")
			.set("gateway.lb.services.bulk.timeouts.response-write-idle", WRITE_IDLE_MILLIS + "ms")
			.set("gateway.lb.services.bulk.health.passive.consecutive-failures", 1)
			.route("upload")
			.uris("upload", List.of(reader.uri()))
			.set("gateway.lb.services.upload.timeouts.request-body-idle", "2s")
			.set("gateway.lb.services.upload.health.passive.consecutive-failures", 1)
			.set("management.endpoints.web.exposure.include", "prometheus");
	}

	@AfterAll
	static void stopBackends() {
		bulk.close();
		reader.close();
	}

	@AfterEach
	void stopTrickling() {
		this.trickle.shutdownNow();
	}

	@Test
	void aClientThatStopsReadingIsCutAfterTheWriteIdleLimitAndChargesNothing() throws Exception {
		int closedBefore = bulk.closed();
		try (Socket socket = new Socket()) {
			// A small receive window: the gateway's writes back up soon.
			socket.setReceiveBufferSize(16 * 1024);
			socket.connect(new InetSocketAddress("127.0.0.1", this.port));
			socket.setSoTimeout(20_000);
			OutputStream out = socket.getOutputStream();
			out.write("GET /bulk/ HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[16 * 1024];
			long read = 0;
			while (read < 64 * 1024) {
				int n = in.read(buffer);
				assertThat(n).as("the answer starts").isPositive();
				read += n;
			}
			long stoppedAt = System.nanoTime();
			// The client reads nothing more: the gateway's send buffer, its writer's
			// queue and the endpoint's connection fill, and then nothing moves.
			await().atMost(Duration.ofSeconds(WRITE_IDLE_MILLIS / 1000 + 15))
				.until(() -> metric(
						"gateway_lb_slow_clients_total{reason=\"response-write-idle\",service=\"bulk\"}") == 1);
			long cutAfter = (System.nanoTime() - stoppedAt) / 1_000_000;
			// The gateway's last write came after the client's last read: the cut can
			// only be later than the limit after it, never sooner.
			assertThat(cutAfter).as("ms from the client's last read to the cut")
				.isGreaterThanOrEqualTo(WRITE_IDLE_MILLIS);
			// The endpoint's connection was closed, and nothing is in flight.
			await().atMost(Duration.ofSeconds(5)).until(() -> bulk.closed() > closedBefore);
			await().atMost(Duration.ofSeconds(5)).until(() -> inFlight("bulk") == 0);
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(ready("bulk").upstream().counts().active()).isZero());
			// What the client did not read ends early: the gateway closed the connection.
			long rest = 0;
			try {
				for (int n = in.read(buffer); n > 0; n = in.read(buffer)) {
					rest += n;
				}
			}
			catch (SocketException ex) {
				// Reset: the gateway closed with bytes unsent.
			}
			assertThat(read + rest).as("bytes the client could read").isLessThan(BODY_BYTES);
		}
		EndpointState state = state("bulk");
		assertThat(state.consecutiveFailures()).as("failures charged to the endpoint").isZero();
		assertThat(state.ejections()).as("ejections, with consecutive-failures: 1 and body-idle: 2s").isZero();
		assertThat(this.client.getNow("/bulk/?size=1000").status()).isEqualTo(200);
	}

	@Test
	void aClientThatReadsSlowlyButSteadilyIsNeverCut() throws Exception {
		// The Bulk backend answers in whole chunks of 64 KB: 6 of them.
		int size = 384 * 1024;
		double cutBefore = metric("gateway_lb_slow_clients_total{reason=\"response-write-idle\",service=\"bulk\"}");
		long start = System.nanoTime();
		try (Socket socket = new Socket()) {
			socket.setReceiveBufferSize(8 * 1024);
			socket.connect(new InetSocketAddress("127.0.0.1", this.port));
			socket.setSoTimeout(20_000);
			OutputStream out = socket.getOutputStream();
			out.write(("GET /bulk/?size=" + size + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[8 * 1024];
			long read = 0;
			for (int n = in.read(buffer); n > 0; n = in.read(buffer)) {
				read += n;
				// At most 80 KB a second: the whole answer takes longer than the limit,
				// no gap comes near it.
				Thread.sleep(100);
			}
			assertThat(read).as("headers and the whole body").isGreaterThan(size);
		}
		// The client's own pauses alone (100 ms per read of at most 8 KB, over 384 KB:
		// 4.8
		// s) make the whole answer take longer than the limit.
		assertThat((System.nanoTime() - start) / 1_000_000).as("ms to read it all").isGreaterThan(WRITE_IDLE_MILLIS);
		assertThat(metric("gateway_lb_slow_clients_total{reason=\"response-write-idle\",service=\"bulk\"}"))
			.isEqualTo(cutBefore);
		assertThat(state("bulk").consecutiveFailures()).isZero();
	}

	@Test
	void anUploadBelowTheMinimumRateIsAnswered408AfterTheGraceChargingNobody() throws Exception {
		try (RawClient client = new RawClient(this.port)) {
			long start = System.nanoTime();
			client.startChunked("POST", "/upload/slow");
			// One byte every 100 ms, 10 bytes a second: never idle for 2 s, far below
			// the default 1 KB a second.
			this.trickle.scheduleAtFixedRate(() -> client.chunk("x"), 0, 100, TimeUnit.MILLISECONDS);
			RawResponse response = client.read();
			long after = (response.headersAtNanos() - start) / 1_000_000;
			assertThat(response.status()).isEqualTo(408);
			assertThat(response.body()).contains("request body timeout");
			// Not before the grace of request-body-idle (2 s): a busy machine makes the
			// 408
			// later, never sooner.
			assertThat(after).as("ms from the start of the upload to the 408").isGreaterThanOrEqualTo(2_000L);
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> reader.active() == 0);
		assertThat(metric("gateway_lb_slow_clients_total{reason=\"request-body\",service=\"upload\"}")).isEqualTo(1);
		assertThat(metric("gateway_lb_rejected_total{reason=\"request-body-idle\",service=\"upload\"}")).isEqualTo(1);
		EndpointState state = state("upload");
		assertThat(state.consecutiveFailures()).isZero();
		assertThat(state.ejections()).isZero();
	}

	/**
	 * A backend that answers {@code size} bytes ({@value #BODY_BYTES} by default) in 64
	 * KB chunks as fast as its connection takes them, and counts its closed connections.
	 */
	static final class Bulk implements AutoCloseable {

		private final AtomicInteger closed = new AtomicInteger();

		private final DisposableServer server = TestBackend
			.bind(HttpServer.create().host("127.0.0.1").doOnChannelInit((observer, channel, remote) -> {
				channel.closeFuture().addListener((future) -> this.closed.incrementAndGet());
			}).handle((request, response) -> {
				int at = request.uri().indexOf("size=");
				int size = (at < 0) ? BODY_BYTES : Integer.parseInt(request.uri().substring(at + 5));
				byte[] chunk = new byte[64 * 1024];
				int chunks = (size + chunk.length - 1) / chunk.length;
				return response.header("Content-Length", String.valueOf((long) chunks * chunk.length))
					.sendByteArray(Flux.range(0, chunks).map((i) -> chunk))
					.then();
			}));

		String uri() {
			return "http://127.0.0.1:" + this.server.port();
		}

		int closed() {
			return this.closed.get();
		}

		@Override
		public void close() {
			this.server.disposeNow();
		}

	}

}
