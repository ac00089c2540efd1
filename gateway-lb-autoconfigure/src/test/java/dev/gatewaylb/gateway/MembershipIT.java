package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Membership follows discovery, and only membership: a service can be drained before its
 * first request, a departed endpoint's meters and pools go within seconds, and a registry
 * that reshuffles its list at every read (as Eureka's client does) causes no rebuild and
 * no change of the round-robin sequence. Spring Cloud LoadBalancer's cache is off, so
 * every poll (each second) reads the discovery client.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(MembershipIT.Discovery.class)
class MembershipIT extends GatewayIntegrationTest {

	static final TestBackend a = TestBackend.start("a");

	static final TestBackend b = TestBackend.start("b");

	static final TestBackend c = TestBackend.start("c");

	/**
	 * The instances of {@code members}, which a test may change.
	 */
	static final List<ServiceInstance> members = new CopyOnWriteArrayList<>(
			List.of(instance("members", a, 1), instance("members", b, 1), instance("members", c, 1)));

	static final Random shuffle = new Random(2026);

	static final AtomicInteger shuffledReads = new AtomicInteger();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("members")
			.route("early")
			.route("shuffled")
			.set("spring.cloud.loadbalancer.cache.enabled", false)
			.set("management.endpoints.web.exposure.include", "gatewaylb,prometheus")
			.set("management.endpoint.gatewaylb.access", "unrestricted");
	}

	@AfterAll
	static void stopBackends() {
		List.of(a, b, c).forEach(TestBackend::close);
	}

	@Test
	void drainsAnEndpointBeforeItsServiceServedARequest() {
		GatewayClient.Answer drained = this.client.send("POST", "/actuator/gatewaylb/early",
				"{\"endpoint\":\"" + address(a) + "\",\"drain\":true}");
		assertThat(drained.status()).as(drained.body()).isEqualTo(200);
		assertThat(drained.body()).contains("draining");
		int before = a.requests();
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/early/").status()).isEqualTo(200);
		}
		assertThat(a.requests()).isEqualTo(before);
	}

	@Test
	void dropsADepartedEndpointsMetersAndPoolsWithinSeconds() {
		for (int i = 0; i < 6; i++) {
			assertThat(this.client.getNow("/members/").status()).isEqualTo(200);
		}
		String leaving = address(c);
		assertThat(series(leaving)).as("c's meters while it serves").isNotEmpty();

		members.removeIf((instance) -> instance.getPort() == c.port());
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(series(leaving)).isEmpty());
		assertThat(series(address(a))).as("the others' meters stay").isNotEmpty();
		int before = c.requests();
		for (int i = 0; i < 10; i++) {
			assertThat(this.client.getNow("/members/").status()).isEqualTo(200);
		}
		assertThat(c.requests()).isEqualTo(before);
	}

	@Test
	void neitherRebuildsNorChangesTheRoundRobinSequenceWhenDiscoveryReshufflesItsList() {
		this.client.getNow("/shuffled/");
		Snapshot<Member> built = this.runtimes.snapshot("shuffled");
		int reads = shuffledReads.get();
		StringBuilder sequence = new StringBuilder();
		// Long enough for several polls, each reading a newly shuffled list.
		long until = System.nanoTime() + Duration.ofMillis(3500).toNanos();
		while (System.nanoTime() - until < 0) {
			sequence.append(this.client.getNow("/shuffled/").backend());
		}
		assertThat(shuffledReads.get() - reads).as("discovery reads during the test").isGreaterThanOrEqualTo(3);
		assertThat(this.runtimes.snapshot("shuffled")).as("no rebuild").isSameAs(built);
		// Weights 5, 1, 2 on a, b, c in address order: nginx's order, from where the
		// first request left it.
		assertThat("acaabaca".repeat(sequence.length() / 8 + 2)).contains("a" + sequence);
	}

	/**
	 * Returns the lines of {@code /actuator/prometheus} that name an endpoint of
	 * {@code members}: gateway-lb's endpoint meters and Reactor Netty's pool meters.
	 */
	private List<String> series(String address) {
		String port = address.substring(address.indexOf(':') + 1);
		List<String> lines = new ArrayList<>();
		for (String line : this.client.getNow("/actuator/prometheus").body().split("\n")) {
			boolean endpointMeter = line.contains("endpoint=\"" + address + "\"")
					&& line.contains("service=\"members\"");
			boolean poolMeter = line.contains("name=\"gateway-lb-members\"") && line.contains(":" + port + "\"");
			if (!line.startsWith("#") && (endpointMeter || poolMeter)) {
				lines.add(line);
			}
		}
		return lines;
	}

	static String address(TestBackend backend) {
		return "127.0.0.1:" + backend.port();
	}

	static ServiceInstance instance(String service, TestBackend backend, int weight) {
		return new DefaultServiceInstance(service + "-" + backend.name(), service, "127.0.0.1", backend.port(), false,
				java.util.Map.of("weight", "" + weight));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Discovery {

		@Bean
		ReactiveDiscoveryClient membershipDiscoveryClient() {
			return new ReactiveDiscoveryClient() {

				@Override
				public String description() {
					return "instances the test changes, and a list shuffled at every read";
				}

				@Override
				public Flux<ServiceInstance> getInstances(String serviceId) {
					return switch (serviceId) {
						case "members" -> Flux.fromIterable(List.copyOf(members));
						case "early" -> Flux.just(instance("early", a, 1), instance("early", b, 1));
						case "shuffled" -> {
							List<ServiceInstance> listed = new ArrayList<>(List.of(instance("shuffled", a, 5),
									instance("shuffled", b, 1), instance("shuffled", c, 2)));
							synchronized (shuffle) {
								Collections.shuffle(listed, shuffle);
							}
							shuffledReads.incrementAndGet();
							yield Flux.fromIterable(listed);
						}
						default -> Flux.empty();
					};
				}

				@Override
				public Flux<String> getServices() {
					return Flux.just("members", "early", "shuffled");
				}

			};
		}

	}

}
