package dev.gatewaylb.gateway;

import java.io.IOException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTPS upstreams: trusted only through the service's own {@code tls.trusted-ca}, which
 * replaces the public roots, and reached over h2 when the service asks for {@code http2}.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UpstreamTlsIT extends GatewayIntegrationTest {

	static final TlsBackend backend = TlsBackend.start();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) throws IOException {
		String caFile = "file:" + new ClassPathResource("tls/ca.pem").getFile().getAbsolutePath();
		TestGateway gateway = TestGateway.properties(registry);
		for (String service : new String[] { "trusting", "trusting-file", "untrusting", "h2", "h11" }) {
			gateway.route(service)
				.set("spring.cloud.discovery.client.simple.instances." + service + "[0].uri", backend.uri());
		}
		gateway.set("gateway.lb.services.trusting.tls.trusted-ca", "classpath:tls/ca.pem")
			.set("gateway.lb.services.trusting-file.tls.trusted-ca", caFile)
			.set("gateway.lb.services.h2.tls.trusted-ca", "classpath:tls/ca.pem")
			.set("gateway.lb.services.h2.http2", true)
			.set("gateway.lb.services.h11.tls.trusted-ca", "classpath:tls/ca.pem")
			.set("gateway.lb.services.h11.http2", false);
	}

	@AfterAll
	static void stopBackend() {
		backend.close();
	}

	@Test
	void reachesAnHttpsUpstreamWhoseCaTheServiceTrusts() {
		GatewayClient.Answer answer = this.client.getNow("/trusting/");
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.backend()).isEqualTo("tls");
		assertThat(answer.body()).isEqualTo("protocol=HTTP/1.1");
	}

	@Test
	void readsTheTrustedCaFromAFileLocation() {
		GatewayClient.Answer answer = this.client.getNow("/trusting-file/");
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.backend()).isEqualTo("tls");
	}

	@Test
	void refusesTheSameUpstreamForAServiceThatDoesNotTrustItsCa() {
		int served = backend.requests();
		GatewayClient.Answer answer = this.client.getNow("/untrusting/");
		assertThat(answer.status()).as(answer.body()).isBetween(500, 599);
		assertThat(answer.backend()).isNull();
		assertThat(backend.requests()).as("no request went over the untrusted connection").isEqualTo(served);
	}

	@Test
	void speaksHttp2ToTheUpstreamWhenTheServiceAsksForIt() {
		GatewayClient.Answer answer = this.client.getNow("/h2/");
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.body()).isEqualTo("protocol=HTTP/2.0");
	}

	@Test
	void speaksHttp11ToTheSameUpstreamWithoutHttp2() {
		GatewayClient.Answer answer = this.client.getNow("/h11/");
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.body()).isEqualTo("protocol=HTTP/1.1");
	}

}
