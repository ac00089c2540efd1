package dev.gatewaylb.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts the sample with {@code demo.backends.enabled=false}, the way it runs in front of
 * real services.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "demo.backends.enabled=false")
class SampleGatewayWithoutBackendsIT {

	@DynamicPropertySource
	static void backendPorts(DynamicPropertyRegistry registry) {
		FreePorts.registerBackendPorts(registry);
	}

	@Autowired
	private ApplicationContext context;

	@LocalServerPort
	private int port;

	@Test
	void startsNoDemoBackends() {
		assertThat(this.context.getBeanNamesForType(DemoBackends.class)).isEmpty();
	}

	@Test
	void gatewayAnswersWithServerErrorWhenNothingListensAtTheEndpoints() {
		WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.build()
			.get()
			.uri("/weighted/")
			.exchange()
			.expectStatus()
			.is5xxServerError()
			// Read the body, so that the connection goes back to the client's pool.
			.expectBody(String.class)
			.returnResult();
	}

}
