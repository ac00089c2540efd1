package dev.gatewaylb.internal.upstream;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.control.ManualControlThread;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.UpstreamSettings;
import io.netty.channel.ConnectTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;

import org.springframework.http.HttpStatus;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The TLS handshake is part of the dial, on real sockets over loopback: an {@code https}
 * endpoint that accepts TCP, reads the ClientHello and never answers is cut when the
 * dial's deadline of {@code timeouts.connect} passes on the request clock, here moved by
 * hand. Netty's own handshake timer starts only once the ClientHello is built and sent,
 * so a handshake it ended would outlast the deadline by that time (a few ms on a warm
 * JVM, hundreds on a cold one). With 30 s left that timer is Reactor Netty's default
 * handshake timeout, 10 s of real time, out of the way while the test holds the clock;
 * without the dial's own timer the attempt would end only there, with Netty's
 * {@code SslHandshakeTimeoutException}, and not within the 5 s the test waits.
 */
class TlsDialDeadlineIT {

	private static final Duration CONNECT = Duration.ofSeconds(30);

	private final SilentTlsEndpoint endpoint = new SilentTlsEndpoint();

	private final ManualControlThread control = new ManualControlThread(new AtomicLong());

	private final Upstreams upstreams = new Upstreams(HttpClient::create, Upstreams.Tls.JDK, this.control);

	@AfterEach
	void stop() throws IOException {
		this.endpoint.close();
	}

	@Test
	void theDialsDeadlineOnTheRequestClockEndsAHandshakeTheEndpointNeverAnswers() {
		Upstream upstream = this.upstreams.build("svc", settings());
		CompletableFuture<Throwable> failure = new CompletableFuture<>();
		upstream.client()
			.get()
			.uri("https://127.0.0.1:" + this.endpoint.port() + "/")
			.response()
			.subscribe((response) -> failure.complete(null), failure::complete);

		// The ClientHello arrived: the handshake is under way, the clock has not moved.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.endpoint.received() > 0);
		assertThat(failure).as("the attempt before the deadline").isNotDone();

		// The connect took no time on the request clock: the handshake has all of
		// timeouts.connect, and no more.
		this.control.advance(CONNECT);
		// Well within Netty's 10 s: only the dial's own timer can end it in time.
		await().atMost(Duration.ofSeconds(5)).until(failure::isDone);
		Throwable error = failure.join();
		assertThat(error).as("what ended the attempt")
			.isInstanceOf(ConnectTimeoutException.class)
			.hasMessageContaining("the TLS handshake with 127.0.0.1:" + this.endpoint.port())
			.hasMessageContaining("timeouts.connect");
		Outcome.Kind kind = Outcome.classify(Outcome.Phase.CONNECTING, error);
		assertThat(kind).isEqualTo(Outcome.Kind.CONNECT_FAILED);
		assertThat(kind.status()).isEqualTo(HttpStatus.BAD_GATEWAY);
		assertThat(kind.error()).isEqualTo("upstream connect failed");
		assertThat(kind.charge()).as("charged to the endpoint").isEqualTo(Outcome.Charge.FAILURE);
		assertThat(this.endpoint.accepted()).as("connections the endpoint accepted").isOne();

		upstream.close().block(Duration.ofSeconds(10));
	}

	private static UpstreamSettings settings() {
		MockEnvironment environment = new MockEnvironment().withProperty("gateway.lb.services.svc.timeouts.connect",
				CONNECT.toSeconds() + "s");
		return GatewayLbSettings.bind(environment).forService("svc").upstream();
	}

	/**
	 * A plain socket on 127.0.0.1 that accepts every connection, reads what comes (the
	 * ClientHello) and never writes a byte.
	 */
	static final class SilentTlsEndpoint implements AutoCloseable {

		private final ServerSocket listener;

		private final List<Socket> accepted = new CopyOnWriteArrayList<>();

		private final AtomicLong received = new AtomicLong();

		SilentTlsEndpoint() {
			try {
				this.listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
			Thread acceptor = new Thread(this::accept, "silent-tls");
			acceptor.setDaemon(true);
			acceptor.start();
		}

		private void accept() {
			while (!this.listener.isClosed()) {
				try {
					Socket socket = this.listener.accept();
					this.accepted.add(socket);
					Thread reader = new Thread(() -> discard(socket), "silent-tls-connection");
					reader.setDaemon(true);
					reader.start();
				}
				catch (IOException closed) {
					return;
				}
			}
		}

		private void discard(Socket socket) {
			byte[] buffer = new byte[4096];
			try (InputStream in = socket.getInputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					this.received.addAndGet(read);
				}
			}
			catch (IOException closed) {
				// The client gave up, or the test closed the endpoint.
			}
		}

		int port() {
			return this.listener.getLocalPort();
		}

		long received() {
			return this.received.get();
		}

		int accepted() {
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
