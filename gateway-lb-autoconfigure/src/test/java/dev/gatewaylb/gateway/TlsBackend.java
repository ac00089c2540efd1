package dev.gatewaylb.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.SSLPeerUnverifiedException;

import io.netty.channel.Channel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslHandler;
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
 * {@code protocol=HTTP/2.0}, and counts what it served. One that requires a client
 * certificate accepts only those the client CA ({@code classpath:tls/client-ca.pem})
 * issued, and adds the subject of the one it saw: {@code protocol=HTTP/1.1
 * client=CN=gateway-lb test client}.
 */
final class TlsBackend implements AutoCloseable {

	private final DisposableServer server;

	private final AtomicInteger requests = new AtomicInteger();

	private TlsBackend(boolean requireClientCertificate) {
		try (InputStream certificate = new ClassPathResource("tls/server.pem").getInputStream();
				InputStream key = new ClassPathResource("tls/server-key.pem").getInputStream();
				InputStream clientCa = new ClassPathResource("tls/client-ca.pem").getInputStream()) {
			Http2SslContextSpec tls = Http2SslContextSpec.forServer(certificate, key);
			if (requireClientCertificate) {
				X509Certificate[] clientRoots = CertificateFactory.getInstance("X.509")
					.generateCertificates(clientCa)
					.toArray(new X509Certificate[0]);
				tls = tls.configure((builder) -> builder.trustManager(clientRoots).clientAuth(ClientAuth.REQUIRE));
			}
			Http2SslContextSpec context = tls;
			this.server = HttpServer.create()
				.host("127.0.0.1")
				.port(0)
				.secure((spec) -> spec.sslContext(context))
				.protocol(HttpProtocol.HTTP11, HttpProtocol.H2)
				.handle((request, response) -> {
					this.requests.incrementAndGet();
					StringBuilder body = new StringBuilder("protocol=").append(request.version().text());
					if (requireClientCertificate) {
						request.withConnection(
								(connection) -> body.append(" client=").append(clientSubject(connection.channel())));
					}
					return response.header("X-Backend", "tls")
						.header("Content-Type", "text/plain")
						.sendString(Mono.just(body.toString()))
						.then();
				})
				.bindNow();
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException(ex);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static TlsBackend start() {
		return new TlsBackend(false);
	}

	static TlsBackend requiringClientCertificate() {
		return new TlsBackend(true);
	}

	/**
	 * Returns the subject of the client's certificate, or {@code none}. An h2 stream's
	 * channel is a child of the connection's, which holds the TLS handler.
	 */
	private static String clientSubject(Channel channel) {
		SslHandler tls = channel.pipeline().get(SslHandler.class);
		if (tls == null && channel.parent() != null) {
			tls = channel.parent().pipeline().get(SslHandler.class);
		}
		try {
			return (tls != null) ? tls.engine().getSession().getPeerPrincipal().getName() : "none";
		}
		catch (SSLPeerUnverifiedException ex) {
			return "none";
		}
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
