package dev.gatewaylb.internal.settings;

import java.io.IOException;
import java.io.InputStream;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.Resource;

/**
 * How the gateway talks to one service's endpoints: its connection pool, timeouts and TLS
 * trust.
 *
 * @param maxConnections most connections per endpoint address
 * @param maxPending most requests waiting for a connection per endpoint address
 * @param pendingTimeout longest wait for a connection
 * @param maxIdleTime how long an idle connection is kept
 * @param connectTimeout longest time to open a connection: resolution, every connect
 * attempt and the TLS handshake
 * @param responseTimeout longest time until the response headers, zero for none
 * @param bodyIdleTimeout longest gap between body chunks, zero for none
 * @param requestBodyIdleTimeout longest gap between two reads of the client's request
 * body, zero for none
 * @param trustedCa the CA certificates that replace the public roots, or {@code null}
 * @param http2 whether to offer h2 to https endpoints
 * @param responseWriteIdleTimeout longest time the client may accept no bytes of its
 * answer, zero for none
 * @param requestBodyMinRate slowest average rate of the client's request body after the
 * grace of {@code requestBodyIdleTimeout}, in bytes per second, 0 for none
 * @param happyEyeballs delay between the connect attempts of one dial to a hostname with
 * several addresses, zero for one after another
 * @param loopAffine whether requests take connections of their own event loop first
 * ({@code pool.loop-affinity: preferred})
 * @param responseWriteMinRate slowest average rate at which the client may take its
 * answer after the grace of {@code responseWriteIdleTimeout}, in bytes per second, 0 for
 * none
 * @param maxDuration longest an answer may still stream after its request was first sent,
 * zero for none
 * @param h2c whether to speak h2 without TLS to http endpoints, by prior knowledge
 * ({@code pool.protocol: h2c})
 */
public record UpstreamSettings(int maxConnections, int maxPending, Duration pendingTimeout, Duration maxIdleTime,
		Duration connectTimeout, Duration responseTimeout, Duration bodyIdleTimeout, Duration requestBodyIdleTimeout,
		@Nullable List<X509Certificate> trustedCa, boolean http2, Duration responseWriteIdleTimeout,
		long requestBodyMinRate, Duration happyEyeballs, boolean loopAffine, long responseWriteMinRate,
		Duration maxDuration, boolean h2c) {

	public UpstreamSettings {
		trustedCa = (trustedCa != null) ? List.copyOf(trustedCa) : null;
	}

	/**
	 * Returns whether a client built for these settings serves {@code other} as well:
	 * they differ at most in what the request path reads from the service's settings on
	 * each request, not from its pools: {@link #requestBodyIdleTimeout()},
	 * {@link #responseWriteIdleTimeout()}, {@link #requestBodyMinRate()} and
	 * {@link #responseWriteMinRate()} and {@link #maxDuration()}.
	 * @param other the new settings
	 * @return whether the pools can be kept
	 */
	public boolean sameClientAs(UpstreamSettings other) {
		return equals(
				new UpstreamSettings(other.maxConnections, other.maxPending, other.pendingTimeout, other.maxIdleTime,
						other.connectTimeout, other.responseTimeout, other.bodyIdleTimeout, this.requestBodyIdleTimeout,
						other.trustedCa, other.http2, this.responseWriteIdleTimeout, this.requestBodyMinRate,
						other.happyEyeballs, other.loopAffine, this.responseWriteMinRate, this.maxDuration, other.h2c));
	}

	/**
	 * Reads the certificates of a PEM bundle.
	 * @param location a Spring resource location, such as {@code classpath:ca.pem}
	 * @return the certificates, at least one
	 * @throws IllegalArgumentException when the resource cannot be read or holds no
	 * certificate
	 */
	static List<X509Certificate> readCertificates(String location) {
		Resource resource = new DefaultResourceLoader().getResource(location);
		try (InputStream pem = resource.getInputStream()) {
			List<X509Certificate> certificates = CertificateFactory.getInstance("X.509")
				.generateCertificates(pem)
				.stream()
				.map(X509Certificate.class::cast)
				.toList();
			if (certificates.isEmpty()) {
				throw new IllegalArgumentException("expected: a PEM bundle of certificates, found none");
			}
			return certificates;
		}
		catch (IOException ex) {
			throw new IllegalArgumentException("expected: a readable PEM bundle (" + ex.getMessage() + ")", ex);
		}
		catch (CertificateException ex) {
			throw new IllegalArgumentException("expected: a PEM bundle of certificates (" + ex.getMessage() + ")", ex);
		}
	}

}
