package dev.gatewaylb.fleet;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.core.publisher.Flux;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * gateway-lb fed by a real Eureka server through Spring Cloud Netflix's Eureka client:
 * backends register through Eureka's REST API with their weight in the metadata, and the
 * gateway follows what the registry says, with the settings docs/fleet.md gives (client
 * fetch every second, server cache every 500 ms).
 * <p>
 * The tests run in order on one registry and one gateway, each leaving the registry as
 * the next expects: weights 5, 1, 2; a weight change; a deregistration; a backend killed
 * while registered.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EurekaDiscoveryIT {

	/**
	 * The Eureka client's fetch interval in these tests.
	 */
	static final Duration FETCH = Duration.ofSeconds(1);

	static EurekaRegistry registry;

	static Gateway gateway;

	static final Backend alpha = Backend.start("alpha");

	static final Backend beta = Backend.start("beta");

	static final Backend gamma = Backend.start("gamma");

	@BeforeAll
	static void start() {
		registry = EurekaRegistry.start();
		registry.register("catalog", alpha, 5);
		registry.register("catalog", beta, 1);
		registry.register("catalog", gamma, 2);
		Map<String, Object> properties = new HashMap<>();
		properties.put("eureka.client.service-url.defaultZone", registry.serviceUrl());
		properties.put("eureka.client.register-with-eureka", false);
		// Jersey is on this JVM's class path for the server only: the gateway's client
		// talks to it with Spring's RestClient, as it does without the server around.
		properties.put("eureka.client.jersey.enabled", false);
		// The bus is on this module's class path for BusFleetIT: not used here.
		properties.put("spring.cloud.bus.enabled", false);
		properties.put("eureka.client.registry-fetch-interval-seconds", FETCH.toSeconds());
		Gateway.route(properties, 0, "catalog");
		properties.put("gateway.lb.services.catalog.algorithm", "round-robin");
		gateway = Gateway.start(properties);
		awaitEndpoints(3);
	}

	@AfterAll
	static void stop() {
		if (gateway != null) {
			gateway.close();
		}
		if (registry != null) {
			registry.close();
		}
		List.of(alpha, beta, gamma).forEach(Backend::close);
	}

	@Test
	@Order(1)
	void sendsExactlyTheRegisteredWeightsInTheSameOrderWhateverOrderTheRegistryLists() {
		// Smooth weighted round-robin over 5, 1, 2 repeats a period of 8 (a c a a b a
		// c a when the ports are in the order alpha, beta, gamma). Ten seconds of
		// requests span ten fetches, each listing the instances in another order: a
		// rebuild or a reset would break the sequence.
		List<String> expected = pattern(5, 1, 2);
		List<String> answers = new ArrayList<>();
		Set<List<Integer>> orders = new HashSet<>();
		DiscoveryClient discovery = gateway.context().getBean(DiscoveryClient.class);
		long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (System.nanoTime() < end) {
			answers.add(gateway.get("/catalog/"));
			if (answers.size() % 50 == 0) {
				orders.add(discovery.getInstances("catalog").stream().map(ServiceInstance::getPort).toList());
			}
		}
		assertThat(orders).as("the orders the registry listed the instances in").hasSizeGreaterThan(1);
		int start = startOf(answers, expected);
		for (int i = start; i < answers.size(); i++) {
			assertThat(answers.get(i)).as("answer %d of %d", i, answers.size())
				.isEqualTo(expected.get((i - start) % expected.size()));
		}
		Map<String, Integer> counts = counts(answers.subList(start, start + 800));
		assertThat(counts).containsEntry("alpha", 500).containsEntry("beta", 100).containsEntry("gamma", 200);
	}

	@Test
	@Order(2)
	void followsAWeightChangedInTheRegistry() {
		long changed = System.nanoTime();
		registry.weight("catalog", gamma, 5);
		Awaitility.await()
			.atMost(FETCH.multipliedBy(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> gateway.body("/actuator/gatewaylb/catalog").contains("\"weight\":5,\"effectiveWeight\":5.0")
					&& weightOf(gamma) == 5);
		long millis = (System.nanoTime() - changed) / 1_000_000;
		System.out.println("FLEET weight change followed in " + millis + " ms");
		Map<String, Integer> counts = counts(requests(1100));
		assertThat(counts).containsEntry("alpha", 500).containsEntry("beta", 100).containsEntry("gamma", 500);
	}

	@Test
	@Order(3)
	void aDeregisteredInstanceGetsNoRequestsWithinTwoFetchIntervals() throws Exception {
		AtomicInteger lastBetaAfter = new AtomicInteger(-1);
		long deregistered = System.nanoTime();
		registry.deregister("catalog", beta);
		// Requests go on for four intervals; beta may answer only during the first two.
		int answered = 0;
		long end = deregistered + FETCH.multipliedBy(4).toNanos();
		long lastBetaNanos = 0;
		while (System.nanoTime() < end) {
			String backend = gateway.get("/catalog/");
			answered++;
			if ("beta".equals(backend)) {
				lastBetaNanos = System.nanoTime();
				lastBetaAfter.set(answered);
			}
		}
		long lastBetaMillis = (lastBetaNanos == 0) ? 0 : (lastBetaNanos - deregistered) / 1_000_000;
		System.out.println("FLEET deregistered instance's last request " + lastBetaMillis + " ms after the DELETE");
		assertThat(lastBetaMillis).as("last request to beta, ms after the DELETE")
			.isLessThan(FETCH.multipliedBy(2).toMillis());
		awaitEndpoints(2);
	}

	@Test
	@Order(4)
	void aBackendKilledWhileRegisteredCostsNoClientError() {
		alpha.close();
		// Alpha stays registered (its lease runs for minutes): connect failures are
		// retried on gamma and passive health ejects alpha.
		List<String> answers = Flux.range(0, 2_000)
			.flatMap((i) -> reactor.core.publisher.Mono.fromCallable(() -> gateway.get("/catalog/"))
				.subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()), 8)
			.collectList()
			.block(Duration.ofSeconds(60));
		assertThat(answers).hasSize(2_000).containsOnly("gamma");
		assertThat(gateway.body("/actuator/gatewaylb/catalog")).contains("\"state\":\"ejected\"");
	}

	private static List<String> requests(int count) {
		List<String> answers = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			answers.add(gateway.get("/catalog/"));
		}
		return answers;
	}

	private static int weightOf(Backend backend) {
		String report = gateway.body("/actuator/gatewaylb/catalog");
		int at = report.indexOf("\"address\":\"" + backend.address() + "\",\"weight\":");
		if (at < 0) {
			return -1;
		}
		String rest = report.substring(at + backend.address().length() + 22);
		return Integer.parseInt(rest.substring(0, rest.indexOf(',')));
	}

	private static void awaitEndpoints(int count) {
		Awaitility.await()
			.atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> gateway.body("/actuator/gatewaylb/catalog").split("\"address\"", -1).length - 1 == count);
	}

	/**
	 * Returns one period of smooth weighted round-robin over alpha, beta, gamma with
	 * these weights, in the order gateway-lb keeps endpoints: by address, here by port
	 * (the backends' random ports decide it).
	 */
	private static List<String> pattern(int alphaWeight, int betaWeight, int gammaWeight) {
		Map<Backend, Integer> weightOf = Map.of(alpha, alphaWeight, beta, betaWeight, gamma, gammaWeight);
		List<Backend> order = new ArrayList<>(weightOf.keySet());
		order.sort(java.util.Comparator.comparingInt(Backend::port));
		int total = alphaWeight + betaWeight + gammaWeight;
		int[] current = new int[order.size()];
		List<String> period = new ArrayList<>();
		for (int pick = 0; pick < total; pick++) {
			int best = 0;
			for (int i = 0; i < order.size(); i++) {
				current[i] += weightOf.get(order.get(i));
				if (current[i] > current[best]) {
					best = i;
				}
			}
			current[best] -= total;
			period.add(order.get(best).name());
		}
		return period;
	}

	/**
	 * Returns where in the answers the period starts: the first answers may fall anywhere
	 * in it, since earlier requests moved the position.
	 */
	private static int startOf(List<String> answers, List<String> period) {
		for (int offset = 0; offset < period.size(); offset++) {
			boolean matches = true;
			for (int i = 0; i < period.size() * 3 && matches; i++) {
				matches = answers.get(offset + i).equals(period.get(i % period.size()));
			}
			if (matches) {
				return offset;
			}
		}
		throw new AssertionError("no period of " + period + " in " + answers.subList(0, 3 * period.size()));
	}

	private static Map<String, Integer> counts(List<String> answers) {
		Map<String, Integer> counts = new HashMap<>();
		answers.forEach((answer) -> counts.merge(answer, 1, Integer::sum));
		return counts;
	}

}
