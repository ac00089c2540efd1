package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One keep-alive connection that never stalls: a client that sends its next request as
 * soon as an answer arrives, alternating a metrics scrape (answered off the event loop)
 * with answers the gateway gives itself at once (a service with no endpoint, as a shed
 * request is answered). Reactor Netty before 1.3.8 stops reading such a connection now
 * and then (reactor/reactor-netty#4361): the request that follows waits for its client's
 * timeout. The build manages 1.3.8; docs/transports.md says what users on older versions
 * see and do.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class KeepAliveIT extends GatewayIntegrationTest {

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		// A route's service that discovery lists no instance of: answered 503 at once.
		TestGateway.properties(registry)
			.set("management.endpoints.web.exposure.include", "prometheus")
			.route("nowhere");
	}

	@Test
	void answersEveryRequestOfAKeepAliveConnectionThatSendsAsSoonAsItIsAnswered() {
		ConnectionProvider one = ConnectionProvider.builder("one-connection").maxConnections(1).build();
		HttpClient client = HttpClient.create(one).baseUrl("http://127.0.0.1:" + this.port);
		List<String> unanswered = new ArrayList<>();
		try {
			// On Reactor Netty 1.3.6 the connection stalled in round 3 or 4 (2 runs of
			// 2).
			for (int round = 0; round < 300 && unanswered.isEmpty(); round++) {
				for (String path : List.of("/actuator/prometheus", "/nowhere/", "/nowhere/", "/nowhere/")) {
					Integer status;
					try {
						status = client.get()
							.uri(path)
							.responseSingle((response, body) -> body.then().thenReturn(response.status().code()))
							.block(Duration.ofSeconds(5));
					}
					catch (RuntimeException ex) {
						unanswered.add("round " + round + " " + path + ": " + ex);
						break;
					}
					assertThat(status).as(path).isEqualTo(path.startsWith("/actuator") ? 200 : 503);
				}
			}
		}
		finally {
			one.disposeLater().block(Duration.ofSeconds(10));
		}
		assertThat(unanswered).as("requests that waited 5 s for an answer").isEmpty();
	}

}
