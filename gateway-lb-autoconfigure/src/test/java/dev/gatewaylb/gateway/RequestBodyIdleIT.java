package dev.gatewaylb.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.balance.EndpointState;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code timeouts.request-body-idle} over real sockets: a client whose body goes idle
 * gets 408, never sooner than one limit after its last chunk, the upstream connection is
 * let go (the pool's only connection serves the next request), and the endpoint is
 * charged nothing; a client that sends faster than the limit is never cut, however long
 * its body takes in all.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RequestBodyIdleIT extends GatewayIntegrationTest {

	static final long IDLE_MILLIS = 1_000;

	static final Reader reader = new Reader();

	/**
	 * Answers at once and streams its answer for 10 s without reading the request body.
	 */
	static final TestBackend early = TestBackend.start("early");

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			// One connection: a request body that held it would leave the next request
			// waiting; one failure would eject the endpoint.
			.route("upload")
			.uris("upload", List.of(reader.uri()))
			.set("gateway.lb.services.upload.timeouts.request-body-idle", IDLE_MILLIS + "ms")
			.set("gateway.lb.services.upload.pool.max-connections", 1)
			.set("gateway.lb.services.upload.health.passive.consecutive-failures", 1)
			// The idle limit alone: these bodies trickle below the default minimum rate
			// on purpose (SlowClientsIT has the rate).
			.set("gateway.lb.services.upload.timeouts.request-body-min-rate", 0)
			.set("gateway.lb.services.early.timeouts.request-body-min-rate", 0)
			.route("early")
			.instances("early", List.of(early))
			.set("gateway.lb.services.early.timeouts.request-body-idle", IDLE_MILLIS + "ms")
			.set("gateway.lb.services.early.pool.max-connections", 1)
			.set("gateway.lb.services.early.health.passive.consecutive-failures", 1);
	}

	@AfterAll
	static void stopBackends() {
		reader.close();
		early.close();
	}

	@Test
	void answers408NoSoonerThanOneLimitAfterTheLastChunkAndFreesTheConnectionChargingNobody() throws Exception {
		assertThat(upload(3, 0).status()).as("warm-up").isEqualTo(200);
		int requestsBefore = reader.requests();

		try (RawClient client = new RawClient(this.port)) {
			client.startChunked("PUT", "/upload/slow");
			// One chunk, then nothing: the body goes idle.
			client.chunk("0123456789");
			RawResponse response = client.read();
			long sinceLastChunk = (response.headersAtNanos() - client.lastChunkBefore(response.headersAtNanos()))
					/ 1_000_000;

			assertThat(response.status()).isEqualTo(408);
			assertThat(response.body()).contains("request body timeout").contains("upload");
			// A busy machine makes the 408 later, never sooner.
			assertThat(sinceLastChunk).as("ms from the last chunk to the 408")
				.isGreaterThanOrEqualTo(IDLE_MILLIS - 100);
			assertThat(response.head()).contains("connection: close");
			assertThat(client.closedWithin(Duration.ofSeconds(5))).as("the gateway closes a 408's connection").isTrue();
		}

		// The backend saw its request break off: the gateway let its connection go.
		await().atMost(Duration.ofSeconds(5)).until(() -> reader.active() == 0);
		assertThat(reader.broken()).as("request bodies the backend saw break off").isGreaterThanOrEqualTo(1);
		assertThat(reader.requests() - requestsBefore).as("sent once, never retried").isEqualTo(1);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(ready("upload").upstream().counts().active()).isZero());

		// The pool's only connection takes the next request: one still held by the
		// broken upload would leave it waiting for the pool's pending timeout, and 503.
		RawResponse next = upload(3, 0);
		assertThat(next.status()).isEqualTo(200);
		assertThat(next.body()).isEqualTo("received 30");

		EndpointState state = state("upload");
		assertThat(state.consecutiveFailures()).isZero();
		assertThat(state.ejections()).isZero();
		assertThat(state.isEjected(this.runtimes.nanoTime())).isFalse();
	}

	@Test
	void aClientThatHangsUpInTheMiddleOfItsUploadIsChargedToNobody() throws Exception {
		assertThat(upload(3, 0).status()).as("warm-up").isEqualTo(200);
		for (int i = 0; i < 5; i++) {
			int broken = reader.broken();
			try (RawClient client = new RawClient(this.port)) {
				client.startChunked("POST", "/upload/abandoned");
				client.chunk("0123456789");
				// The body reached the backend, which waits for the rest.
				await().atMost(Duration.ofSeconds(5)).until(() -> reader.active() == 1);
			}
			// The client hung up; the backend sees its request break off.
			await().atMost(Duration.ofSeconds(5)).until(() -> reader.broken() > broken && reader.active() == 0);
		}
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(ready("upload").upstream().counts().active()).isZero());
		EndpointState state = state("upload");
		assertThat(state.consecutiveFailures()).as("consecutive failures charged").isZero();
		assertThat(state.ejections()).as("ejections, with consecutive-failures: 1").isZero();
		assertThat(upload(3, 0).status()).isEqualTo(200);
	}

	@Test
	void neverCutsABodyWhoseChunksComeFasterThanTheLimitHoweverLongItTakes() throws Exception {
		// 10 chunks 200 ms apart: the client's own pauses alone, 1.8 s, are longer than
		// the limit; each is a fifth of it.
		RawResponse response = upload(10, 200);

		assertThat(response.status()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("received 100");
		assertThat(state("upload").consecutiveFailures()).isZero();
	}

	@Test
	void closesTheClientsConnectionWhenTheAnswerHadStarted() throws Exception {
		// The limit counts from when the gateway starts sending the body: on a cold JVM
		// the first request's own set-up can take longer than the limit.
		assertThat(this.client.getNow("/early/warm-up").status()).isEqualTo(200);
		try (RawClient client = new RawClient(this.port)) {
			// The backend answers at once and streams for 10 s; the client sends one
			// chunk.
			client.startChunked("POST", "/early/?chunks=50&gap=200");
			client.chunk("0123456789");
			RawResponse response = client.read();
			long sinceLastChunk = (response.endedAtNanos() - client.lastChunkBefore(response.endedAtNanos()))
					/ 1_000_000;

			assertThat(response.status()).as("the answer had started").isEqualTo(200);
			assertThat(response.whole()).as("the answer is not passed off as whole").isFalse();
			assertThat(client.closedWithin(Duration.ofSeconds(5))).isTrue();
			// Cut by the idle limit, which a busy machine makes later, never sooner; the
			// backend's answer would have streamed for 10 s.
			assertThat(sinceLastChunk).as("ms from the last chunk to the closed connection")
				.isGreaterThanOrEqualTo(IDLE_MILLIS - 100);
		}
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(ready("early").upstream().counts().active()).isZero());
		assertThat(state("early").consecutiveFailures()).isZero();
		assertThat(state("early").ejections()).isZero();
	}

	/**
	 * Sends {@code chunks} chunks of 10 bytes, {@code gapMillis} apart, and the end.
	 */
	private RawResponse upload(int chunks, long gapMillis) throws Exception {
		try (RawClient client = new RawClient(this.port)) {
			client.startChunked("POST", "/upload/x");
			for (int i = 0; i < chunks; i++) {
				if (i > 0 && gapMillis > 0) {
					// The client's pace, not a wait for the gateway.
					Thread.sleep(gapMillis);
				}
				client.chunk("0123456789");
			}
			client.end();
			return client.read();
		}
	}

	/**
	 * A backend that reads the whole request body, then answers how many bytes it got,
	 * and counts the bodies that broke off.
	 */
	static final class Reader implements AutoCloseable {

		private final AtomicInteger requests = new AtomicInteger();

		private final AtomicInteger active = new AtomicInteger();

		private final AtomicInteger broken = new AtomicInteger();

		private final DisposableServer server;

		Reader() {
			this.server = TestBackend.bind(HttpServer.create().host("127.0.0.1").handle((request, response) -> {
				this.requests.incrementAndGet();
				this.active.incrementAndGet();
				return request.receive()
					.map(ByteBuf::readableBytes)
					.reduce(0, Integer::sum)
					.flatMap((bytes) -> response.sendString(Mono.just("received " + bytes)).then())
					.doOnError((error) -> this.broken.incrementAndGet())
					.doOnCancel(this.broken::incrementAndGet)
					.doFinally((signal) -> this.active.decrementAndGet());
			}));
		}

		String uri() {
			return "http://127.0.0.1:" + this.server.port();
		}

		int requests() {
			return this.requests.get();
		}

		int active() {
			return this.active.get();
		}

		int broken() {
			return this.broken.get();
		}

		@Override
		public void close() {
			this.server.disposeNow();
		}

	}

	/**
	 * An HTTP/1.1 client on a plain socket, so that the test decides exactly when each
	 * byte of the request goes out and sees exactly what comes back.
	 */
	static final class RawClient implements AutoCloseable {

		private final Socket socket;

		private final OutputStream out;

		private final InputStream in;

		private final List<Long> chunkNanos = new CopyOnWriteArrayList<>();

		RawClient(int port) throws IOException {
			this.socket = new Socket("127.0.0.1", port);
			this.socket.setSoTimeout(15_000);
			this.out = this.socket.getOutputStream();
			this.in = this.socket.getInputStream();
		}

		void startChunked(String method, String path) throws IOException {
			write(method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
					+ "Content-Type: application/octet-stream\r\n\r\n");
		}

		/**
		 * Sends one chunk; false once the gateway no longer takes them.
		 */
		boolean chunk(String data) {
			try {
				write(Integer.toHexString(data.length()) + "\r\n" + data + "\r\n");
				this.chunkNanos.add(System.nanoTime());
				return true;
			}
			catch (IOException ex) {
				return false;
			}
		}

		void end() throws IOException {
			write("0\r\n\r\n");
		}

		/**
		 * Returns when the last chunk before {@code nanos} went out.
		 */
		long lastChunkBefore(long nanos) {
			return this.chunkNanos.stream().filter((sent) -> sent < nanos).max(Long::compare).orElseThrow();
		}

		private synchronized void write(String text) throws IOException {
			this.out.write(text.getBytes(StandardCharsets.US_ASCII));
			this.out.flush();
		}

		/**
		 * Reads one response: its head, then its body by Content-Length or chunks, then
		 * whether the gateway closed the connection.
		 */
		RawResponse read() throws IOException {
			String head = readHead();
			long headersAt = System.nanoTime();
			int status = Integer.parseInt(head.substring(9, 12));
			String lower = head.toLowerCase(Locale.ROOT);
			ByteArrayOutputStream body = new ByteArrayOutputStream();
			boolean whole;
			try {
				int length = contentLength(lower);
				whole = (length >= 0) ? readFully(body, length) : readChunks(body);
			}
			catch (SocketException ex) {
				// Reset rather than closed: cut off all the same.
				whole = false;
			}
			return new RawResponse(status, lower, body.toString(StandardCharsets.UTF_8), whole, headersAt,
					System.nanoTime());
		}

		/**
		 * Returns whether the gateway closes the connection within {@code timeout}, with
		 * nothing more to read.
		 */
		boolean closedWithin(Duration timeout) throws IOException {
			this.socket.setSoTimeout((int) timeout.toMillis());
			try {
				return this.in.read() == -1;
			}
			catch (SocketException ex) {
				return true;
			}
			catch (SocketTimeoutException ex) {
				return false;
			}
		}

		private String readHead() throws IOException {
			StringBuilder head = new StringBuilder();
			while (!head.toString().endsWith("\r\n\r\n")) {
				int b = this.in.read();
				if (b < 0) {
					throw new IOException("connection closed before a response: " + head);
				}
				head.append((char) b);
			}
			return head.toString();
		}

		private static int contentLength(String head) {
			int at = head.indexOf("\r\ncontent-length:");
			if (at < 0) {
				return -1;
			}
			int end = head.indexOf("\r\n", at + 2);
			return Integer.parseInt(head.substring(at + "\r\ncontent-length:".length(), end).trim());
		}

		private boolean readFully(ByteArrayOutputStream body, int length) throws IOException {
			for (int i = 0; i < length; i++) {
				int b = this.in.read();
				if (b < 0) {
					return false;
				}
				body.write(b);
			}
			return true;
		}

		/**
		 * Reads chunks until the last one; false if the connection ends first.
		 */
		private boolean readChunks(ByteArrayOutputStream body) throws IOException {
			while (true) {
				String size = readLine();
				if (size == null) {
					return false;
				}
				int length = Integer.parseInt(size.trim(), 16);
				if (length == 0) {
					return readLine() != null;
				}
				if (!readFully(body, length) || readLine() == null) {
					return false;
				}
			}
		}

		private String readLine() throws IOException {
			StringBuilder line = new StringBuilder();
			while (true) {
				int b = this.in.read();
				if (b < 0) {
					return null;
				}
				if (b == '\n') {
					return line.toString().replace("\r", "");
				}
				line.append((char) b);
			}
		}

		@Override
		public void close() throws IOException {
			this.socket.close();
		}

	}

	/**
	 * What came back: the status, the head (lower case), the body, whether the body
	 * arrived whole, and when the head and the end arrived.
	 */
	record RawResponse(int status, String head, String body, boolean whole, long headersAtNanos, long endedAtNanos) {
	}

}
