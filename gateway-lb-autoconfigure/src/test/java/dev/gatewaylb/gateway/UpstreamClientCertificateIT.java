package dev.gatewaylb.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual TLS to an upstream that requires a client certificate: the gateway's client key
 * store ({@code spring.cloud.gateway.server.webflux.httpclient.ssl.key-store}) stays in
 * force for a service whose own {@code tls.trusted-ca} replaces only the trust roots,
 * over HTTP/1.1 and h2.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UpstreamClientCertificateIT extends GatewayIntegrationTest {

	static final TlsBackend backend = TlsBackend.requiringClientCertificate();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry)
			.set("spring.cloud.gateway.server.webflux.httpclient.ssl.key-store", "classpath:tls/client.p12")
			.set("spring.cloud.gateway.server.webflux.httpclient.ssl.key-store-type", "PKCS12")
			.set("spring.cloud.gateway.server.webflux.httpclient.ssl.key-store-password", "test-only")
			.set("spring.cloud.gateway.server.webflux.httpclient.ssl.key-password", "test-only");
		for (String service : new String[] { "mutual", "mutual-h2", "untrusting" }) {
			gateway.route(service)
				.set("spring.cloud.discovery.client.simple.instances." + service + "[0].uri", backend.uri());
		}
		gateway.set("gateway.lb.services.mutual.tls.trusted-ca", "classpath:tls/ca.pem")
			.set("gateway.lb.services.mutual-h2.tls.trusted-ca", "classpath:tls/ca.pem")
			.set("gateway.lb.services.mutual-h2.http2", true);
	}

	@AfterAll
	static void stopBackend() {
		backend.close();
	}

	@Test
	void presentsTheGatewaysClientCertificateToAnUpstreamTrustedThroughItsOwnCa() {
		GatewayClient.Answer answer = this.client.getNow("/mutual/");
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
		assertThat(answer.body()).isEqualTo("protocol=HTTP/1.1 client=CN=gateway-lb test client");
	}

	@Test
	void presentsItOverHttp2Too() {
		GatewayClient.Answer answer = this.client.getNow("/mutual-h2/");
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
		assertThat(answer.body()).isEqualTo("protocol=HTTP/2.0 client=CN=gateway-lb test client");
	}

	@Test
	void stillRefusesTheUpstreamForAServiceThatDoesNotTrustItsCa() {
		// The gateway's own trust is the JDK's roots: the per-service CA is what
		// trusts the upstream, not the key store.
		int served = backend.requests();
		GatewayClient.Answer answer = this.client.getNow("/untrusting/");
		assertThat(answer.status()).as(answer.body()).isBetween(500, 599);
		assertThat(backend.requests()).isEqualTo(served);
	}

}
