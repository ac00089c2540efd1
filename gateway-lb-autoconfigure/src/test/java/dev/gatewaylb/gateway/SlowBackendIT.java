package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One backend much slower than its two peers. Under 8 concurrent clients, one that holds
 * every request it gets: the load-aware algorithms stop sending it requests while it
 * holds them, whatever the machine's speed, where round-robin would send it a third and
 * so hold every client. One request at a time to one that answers in 250 ms against 2 ms:
 * peak-EWMA learns from the latency alone. Round-robin sends the slow one exactly a
 * third.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SlowBackendIT {

	static final int CONCURRENCY = 8;

	static final List<TestBackend> backends = List.of(TestBackend.start("slow"), TestBackend.start("fast-1"),
			TestBackend.start("fast-2"));

	static final TestBackend slow = backends.get(0);

	static {
		slow.delay(Duration.ofMillis(250));
		backends.get(1).delay(Duration.ofMillis(2));
		backends.get(2).delay(Duration.ofMillis(2));
	}

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		for (String algorithm : List.of("round-robin", "least-requests", "peak-ewma", "power-of-two-choices")) {
			gateway.route(algorithm)
				.instances(algorithm, backends)
				.set("gateway.lb.services." + algorithm + ".algorithm", algorithm);
		}
	}

	@LocalServerPort
	int port;

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
	}

	@ParameterizedTest
	@ValueSource(strings = { "least-requests", "peak-ewma", "power-of-two-choices" })
	void loadAwareAlgorithmsStopSendingRequestsToABackendThatHoldsThem(String algorithm) {
		slow.reset();
		// Every request the slow backend gets, it holds until the test lets it go, and
		// with it one of the 8 clients: an algorithm that sent it a share of the
		// requests would soon hold all 8, and no more answers would come.
		slow.hold();
		try (GatewayClient client = new GatewayClient(this.port);
				ClientLoad load = new ClientLoad(client, "/" + algorithm + "/", CONCURRENCY)) {
			load.await(300);
			assertThat(load.failures()).as("client-visible errors: %s", load.failureCauses()).isZero();
			assertThat(slow.requests()).as("%s: requests to the slow backend while 300 were answered", algorithm)
				.isLessThan(CONCURRENCY);
		}
		finally {
			slow.release();
		}
	}

	@Test
	void peakEwmaLearnsFromLatencyAloneWhenRequestsNeverOverlap() {
		// One request at a time: every in-flight count is 0 at each pick, so only the
		// latency samples can tell the slow backend apart; without them it gets a third.
		try (GatewayClient client = new GatewayClient(this.port)) {
			int slow = 0;
			for (int i = 0; i < 150; i++) {
				if ("slow".equals(client.getNow("/peak-ewma/").backend())) {
					slow++;
				}
			}
			assertThat(slow).isLessThan(150 / 6);
		}
	}

	@Test
	void roundRobinIgnoresLatencyAndSendsExactlyAThird() {
		try (GatewayClient client = new GatewayClient(this.port)) {
			List<GatewayClient.Answer> answers = Flux.range(0, 120)
				.flatMap((i) -> client.get("/round-robin/", Map.of()), CONCURRENCY)
				.collectList()
				.block(Duration.ofSeconds(60));
			assertThat(answers).allSatisfy((answer) -> assertThat(answer.status()).isEqualTo(200));
			Map<String, Long> counts = answers.stream()
				.collect(Collectors.groupingBy(GatewayClient.Answer::backend, Collectors.counting()));
			assertThat(counts).containsEntry("slow", 40L);
		}
	}

}
