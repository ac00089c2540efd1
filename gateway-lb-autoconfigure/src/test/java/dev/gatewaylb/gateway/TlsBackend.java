package dev.gatewaylb.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;

import org.springframework.core.io.ClassPathResource;

/**
 * A real HTTPS server on loopback, with the certificate that the test CA
 * ({@code classpath:tls/ca.pem}) issued for 127.0.0.1, offering HTTP/1.1 and h2 through
 * ALPN. It answers every request with the protocol it saw, {@code protocol=HTTP/1.1} or
 * {@code protocol=HTTP/2.0}, and counts what it served.
 */
final class TlsBackend implements AutoCloseable {

	private final DisposableServer server;

	private final AtomicInteger requests = new AtomicInteger();

	private TlsBackend() {
		try (InputStream certificate = new ClassPathResource("tls/server.pem").getInputStream();
				InputStream key = new ClassPathResource("tls/server-key.pem").getInputStream()) {
			Http2SslContextSpec tls = Http2SslContextSpec.forServer(certificate, key);
			this.server = HttpServer.create()
				.host("127.0.0.1")
				.port(0)
				.secure((spec) -> spec.sslContext(tls))
				.protocol(HttpProtocol.HTTP11, HttpProtocol.H2)
				.handle((request, response) -> {
					this.requests.incrementAndGet();
					return response.header("X-Backend", "tls")
						.header("Content-Type", "text/plain")
						.sendString(Mono.just("protocol=" + request.version().text()))
						.then();
				})
				.bindNow();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static TlsBackend start() {
		return new TlsBackend();
	}

	String uri() {
		return "https://127.0.0.1:" + this.server.port();
	}

	int requests() {
		return this.requests.get();
	}

	@Override
	public void close() {
		this.server.disposeNow();
	}

}
