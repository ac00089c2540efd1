package dev.gatewaylb.internal.upstream;

import java.security.cert.X509Certificate;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.netty.http.client.HttpClient;
import reactor.netty.tcp.SslProvider;

import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.config.HttpClientSslConfigurer;

/**
 * TLS for a service as the gateway's own client has it
 * ({@code spring.cloud.gateway.server.webflux.httpclient.ssl.*}), with only the trust
 * roots replaced by the service's {@code tls.trusted-ca}: the client certificate (from
 * {@code key-store} or {@code ssl-bundle}), the bundle's ciphers and protocols, and the
 * handshake and close-notify timeouts stay.
 * <p>
 * Built on Spring Cloud Gateway's own {@link HttpClientSslConfigurer}, reading the same
 * properties and bundles, so that the key material is loaded exactly as for the gateway's
 * client; a subclass swaps the trusted certificates, which that configurer puts before
 * {@code use-insecure-trust-manager} and the bundle's trust. A configurer bean the
 * application declares in place of the gateway's is not consulted.
 */
public final class GatewayTls implements Upstreams.Tls {

	private final HttpClientProperties.Ssl ssl;

	private final SslBundles bundles;

	/**
	 * Creates the TLS of the gateway's client.
	 * @param ssl the gateway client's TLS settings
	 * @param bundles the application's SSL bundles, for {@code ssl-bundle}
	 */
	public GatewayTls(HttpClientProperties.Ssl ssl, SslBundles bundles) {
		this.ssl = ssl;
		this.bundles = bundles;
	}

	@Override
	public HttpClient secure(HttpClient client, @Nullable List<X509Certificate> trustedCa, boolean http2) {
		Configurer configurer = new Configurer(this.ssl, http2, this.bundles,
				(trustedCa != null) ? trustedCa.toArray(new X509Certificate[0]) : null);
		return client.secure(configurer::configure);
	}

	/**
	 * The gateway's configurer with the service's roots and protocol. It picks h2 or
	 * HTTP/1.1 from {@code server.http2.enabled}: a properties object of its own says the
	 * service's choice instead.
	 */
	private static final class Configurer extends HttpClientSslConfigurer {

		private final X509Certificate @Nullable [] roots;

		Configurer(HttpClientProperties.Ssl ssl, boolean http2, SslBundles bundles,
				X509Certificate @Nullable [] roots) {
			super(ssl, protocol(http2), bundles);
			this.roots = roots;
		}

		private static ServerProperties protocol(boolean http2) {
			ServerProperties properties = new ServerProperties();
			properties.getHttp2().setEnabled(http2);
			return properties;
		}

		@Override
		protected X509Certificate[] getTrustedX509CertificatesForTrustManager() {
			return (this.roots != null) ? this.roots : super.getTrustedX509CertificatesForTrustManager();
		}

		void configure(SslProvider.SslContextSpec spec) {
			configureSslContext(getSslProperties(), spec);
		}

	}

}
