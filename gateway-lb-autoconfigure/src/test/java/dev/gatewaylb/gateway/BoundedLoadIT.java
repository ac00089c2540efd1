package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One hot key through the gateway to real backends with {@code hash-balance-factor:
 * 1.25}: 15 concurrent requests of the key, each held 40 ms by its backend, never put
 * more than {@code ceil(1.25 x 15 / 3) = 7} at once on the key's endpoint; the rest go on
 * along the ring, the next endpoint first. Requests one at a time stay on the key's
 * endpoint.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BoundedLoadIT extends GatewayIntegrationTest {

	static final String KEY = "hot-user";

	static final int CLIENTS = 15;

	static final int BOUND = 7;

	static final int ROUNDS = 5;

	static final List<TestBackend> backends = List.of(TestBackend.start("a"), TestBackend.start("b"),
			TestBackend.start("c"));

	static final List<TestBackend> quietBackends = List.of(TestBackend.start("qa"), TestBackend.start("qb"),
			TestBackend.start("qc"));

	static {
		backends.forEach((backend) -> backend.delay(Duration.ofMillis(40)));
	}

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("hot")
			.instances("hot", backends)
			.set("gateway.lb.services.hot.algorithm", "consistent-hash")
			.set("gateway.lb.services.hot.hash-key", "header:X-User")
			.set("gateway.lb.services.hot.hash-balance-factor", "1.25")
			.route("quiet")
			.instances("quiet", quietBackends)
			.set("gateway.lb.services.quiet.algorithm", "consistent-hash")
			.set("gateway.lb.services.quiet.hash-key", "header:X-User")
			.set("gateway.lb.services.quiet.hash-balance-factor", "1.25");
	}

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
		quietBackends.forEach(TestBackend::close);
	}

	@Test
	void aQuietKeyStaysOnItsEndpointRequestAfterRequest() {
		// One client, one request at a time, each sent the moment the previous answer is
		// in: with three endpoints the bound is ceil(1.25 x 2 / 3) = 1, so the owner must
		// not still count the previous request in flight when the next one is picked.
		ready("quiet");
		List<String> answeredBy = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			answeredBy.add(this.client.getNow("/quiet/" + i, Map.of("X-User", KEY)).backend());
		}
		assertThat(answeredBy).as("backends in order").containsOnly(answeredBy.get(0));
	}

	@Test
	void keepsTheKeysEndpointAtItsBoundAndSpillsTheRestAlongTheRing() {
		ready("hot");
		TestBackend owner = backend(ringOrder(0));
		TestBackend successor = backend(ringOrder(1));
		assertSequentialRequestsStayOn(owner);
		int mostAtOwner = 0;
		int atOwner = 0;
		int atSuccessor = 0;
		int elsewhere = 0;
		for (int round = 0; round < ROUNDS; round++) {
			awaitIdle();
			backends.forEach(TestBackend::reset);
			List<GatewayClient.Answer> answers = Flux.range(0, CLIENTS)
				.flatMap((i) -> this.client.get("/hot/" + i, Map.of("X-User", KEY)), CLIENTS)
				.collectList()
				.block(Duration.ofSeconds(30));
			assertThat(answers).hasSize(CLIENTS).allSatisfy((answer) -> assertThat(answer.status()).isEqualTo(200));
			mostAtOwner = Math.max(mostAtOwner, owner.maxActive());
			atOwner += owner.requests();
			atSuccessor += successor.requests();
			elsewhere += CLIENTS - owner.requests() - successor.requests();
		}
		String counts = "requests at the owner " + atOwner + ", its successor " + atSuccessor + ", the third "
				+ elsewhere;
		assertThat(mostAtOwner).as("most requests the owner held at once; %s", counts).isLessThanOrEqualTo(BOUND);
		assertThat(atSuccessor).as("the next endpoint on the ring takes the first spill; %s", counts).isPositive();
		assertThat(atOwner).as(counts).isGreaterThanOrEqualTo(ROUNDS * 2);
		awaitIdle();
		assertSequentialRequestsStayOn(owner);
		awaitIdle();
	}

	/**
	 * Sends requests of the key one at a time, each once the previous one has left the
	 * in-flight counts (the client can read an answer just before the gateway releases
	 * it), and checks that the key's endpoint answers every one.
	 */
	private void assertSequentialRequestsStayOn(TestBackend owner) {
		for (int i = 0; i < 10; i++) {
			awaitIdle();
			assertThat(this.client.getNow("/hot/one", Map.of("X-User", KEY)).backend()).isEqualTo(owner.name());
		}
	}

	private void awaitIdle() {
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("hot") == 0);
	}

	/**
	 * Returns the backend the key meets {@code n}-th clockwise: the key's owner on a
	 * plain ring of the backends without the {@code n} before it.
	 */
	private static int ringOrder(int n) {
		List<Endpoint> remaining = new ArrayList<>(
				backends.stream().map((backend) -> Endpoint.of("127.0.0.1", backend.port(), 1)).toList());
		int index = -1;
		for (int i = 0; i <= n; i++) {
			Balancer<Endpoint> ring = new Balancer<>(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH),
					Function.identity(), System::nanoTime, ThreadLocalRandom::current);
			Endpoint next = ring.update(remaining).endpoint(ring.snapshot().select(KEY));
			remaining.remove(next);
			index = backends.stream()
				.map(TestBackend::port)
				.toList()
				.indexOf(Integer.parseInt(next.address().split(":")[1]));
		}
		return index;
	}

	private static TestBackend backend(int index) {
		return backends.get(index);
	}

}
