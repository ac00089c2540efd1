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
 * One backend 125 times slower than its two peers, under 8 concurrent clients: the
 * load-aware algorithms send it far less than the third that round-robin does. Bounds are
 * loose on purpose (half its share, a quarter for random pairs), so that a loaded CI
 * machine, which slows the fast backends too, does not fail them.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SlowBackendIT {

	static final int REQUESTS = 600;

	static final int CONCURRENCY = 8;

	static final List<TestBackend> backends = List.of(TestBackend.start("slow"), TestBackend.start("fast-1"),
			TestBackend.start("fast-2"));

	static {
		backends.get(0).delay(Duration.ofMillis(250));
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
	@ValueSource(strings = { "least-requests", "peak-ewma" })
	void loadAwareAlgorithmsSendTheSlowBackendFarLessThanItsShare(String algorithm) {
		Map<String, Long> counts = drive(algorithm);
		assertThat(counts.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(REQUESTS);
		// Its fair share is a third, 200; a load-aware pick gives it far less.
		assertThat(counts.getOrDefault("slow", 0L)).as("%s: %s", algorithm, counts).isLessThan(REQUESTS / 6);
	}

	@Test
	void powerOfTwoChoicesSendsTheSlowBackendLessThanItsShare() {
		Map<String, Long> counts = drive("power-of-two-choices");
		assertThat(counts.getOrDefault("slow", 0L)).as("%s", counts).isLessThan(REQUESTS / 4);
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
		Map<String, Long> counts = drive("round-robin");
		assertThat(counts).containsEntry("slow", (long) REQUESTS / 3);
	}

	private Map<String, Long> drive(String service) {
		try (GatewayClient client = new GatewayClient(this.port)) {
			List<GatewayClient.Answer> answers = Flux.range(0, REQUESTS)
				.flatMap((i) -> client.get("/" + service + "/", Map.of()), CONCURRENCY)
				.collectList()
				.block(Duration.ofSeconds(60));
			assertThat(answers).allSatisfy((answer) -> assertThat(answer.status()).isEqualTo(200));
			return answers.stream()
				.collect(Collectors.groupingBy(GatewayClient.Answer::backend, Collectors.counting()));
		}
	}

}
