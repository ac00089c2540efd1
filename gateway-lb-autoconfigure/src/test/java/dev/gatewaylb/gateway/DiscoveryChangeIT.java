package dev.gatewaylb.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Endpoints added and removed through discovery while traffic flows: a removed endpoint
 * receives no request sent after the gateway dropped it, an added one ramps up under slow
 * start, and nothing fails.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(DiscoveryChangeIT.Discovery.class)
class DiscoveryChangeIT {

	static final Duration WINDOW = Duration.ofSeconds(8);

	static final TestBackend a = TestBackend.start("a");

	static final TestBackend b = TestBackend.start("b");

	static final TestBackend c = TestBackend.start("c");

	static final List<ServiceInstance> instances = new CopyOnWriteArrayList<>(List.of(instance(a), instance(b)));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("dyn")
			.set("gateway.lb.services.dyn.slow-start", WINDOW.toMillis() + "ms")
			// Only discovery events may reveal a change in this test, not expiry.
			.set("spring.cloud.loadbalancer.cache.ttl", "1h");
	}

	@LocalServerPort
	int port;

	@Autowired
	ApplicationEventPublisher events;

	@Autowired
	ServiceRuntimes runtimes;

	@AfterAll
	static void stopBackends() {
		List.of(a, b, c).forEach(TestBackend::close);
	}

	/**
	 * Asserts what clients see, never how fast the gateway saw the change: a request sent
	 * after the gateway's balancer had dropped an endpoint never reaches it, one sent
	 * after it added one may, the added one ramps up under slow start, and no request
	 * fails. Times are the test's own: a request's start is taken before it is sent, and
	 * a change is taken as seen when the test found it in the snapshot, which is after
	 * the gateway applied it, so "sent after the change" holds for every request counted.
	 */
	@Test
	void requestsReachOnlyCurrentMembersWhileTrafficFlowsAndNoneFails() {
		AtomicInteger failures = new AtomicInteger();
		List<Sent> sent = new CopyOnWriteArrayList<>();
		AtomicBoolean running = new AtomicBoolean(true);
		try (GatewayClient client = new GatewayClient(this.port)) {
			Disposable traffic = Flux.range(0, 8).flatMap((lane) -> Mono.defer(() -> {
				long start = System.nanoTime();
				return client.get("/dyn/", Map.of()).doOnNext((answer) -> {
					if (answer.status() != 200) {
						failures.incrementAndGet();
					}
					sent.add(new Sent(start, answer.backend()));
				});
			}).repeat(running::get), 8).subscribe();
			try {
				await().until(() -> a.requests() > 200 && b.requests() > 200);

				long beforeJoin = System.nanoTime();
				instances.add(instance(c));
				heartbeat();
				long joined = seen(() -> members().contains(address(c)));
				int cBefore = c.requests();
				int servedBefore = sent.size();
				await().until(() -> sent.size() - servedBefore >= 200);
				double rampingShare = (double) (c.requests() - cBefore) / (sent.size() - servedBefore);
				// Until now c counted at most max(0.1, elapsed / window) of its weight,
				// so at most f / (2 + f) of the traffic; without slow start it would get
				// 1/3. Elapsed is measured from before the change, which is at least the
				// gateway's own: the bound is never tighter than the truth.
				double factor = Math.min(1,
						Math.max(0.1, (System.nanoTime() - beforeJoin) / (double) WINDOW.toNanos()));
				assertThat(rampingShare).as("c's share while it ramps, at most f / (2 + f), f = %.2f", factor)
					.isPositive()
					.isLessThan(factor / (2 + factor) + 0.03);

				// The ramp started when the gateway added c, before the test saw it.
				await().atMost(WINDOW.plusSeconds(5)).until(() -> System.nanoTime() - joined > WINDOW.toNanos());
				int cRamped = c.requests();
				int servedRamped = sent.size();
				await().until(() -> sent.size() - servedRamped >= 900);
				double rampedShare = (double) (c.requests() - cRamped) / (sent.size() - servedRamped);
				assertThat(rampedShare).isCloseTo(1.0 / 3, Offset.offset(0.02));

				instances.removeIf((instance) -> instance.getPort() == port(a));
				heartbeat();
				long removed = seen(() -> !members().contains(address(a)));
				int servedRemoved = sent.size();
				await().until(() -> sent.size() - servedRemoved >= 600);
				assertThat(sent).filteredOn((request) -> request.startNanos() > removed)
					.as("requests sent after a left")
					.hasSizeGreaterThanOrEqualTo(500)
					.extracting(Sent::backend)
					.doesNotContain(a.name())
					.contains(b.name(), c.name());
			}
			finally {
				running.set(false);
				traffic.dispose();
			}
		}
		assertThat(failures).hasValue(0);
	}

	/**
	 * Waits until the condition holds and returns when the test saw it.
	 */
	private static long seen(java.util.function.BooleanSupplier condition) {
		await().until(condition::getAsBoolean);
		return System.nanoTime();
	}

	private List<String> members() {
		Snapshot<Member> snapshot = this.runtimes.snapshot("dyn");
		List<String> addresses = new java.util.ArrayList<>();
		for (int i = 0; snapshot != null && i < snapshot.size(); i++) {
			addresses.add(snapshot.endpoint(i).address());
		}
		return addresses;
	}

	private static String address(TestBackend backend) {
		return "127.0.0.1:" + port(backend);
	}

	private void heartbeat() {
		this.events.publishEvent(new HeartbeatEvent(this, System.nanoTime()));
	}

	static ServiceInstance instance(TestBackend backend) {
		return new DefaultServiceInstance(backend.name(), "dyn", "127.0.0.1", port(backend), false);
	}

	static int port(TestBackend backend) {
		return URI.create(backend.uri()).getPort();
	}

	/**
	 * One request: when the client sent it, and which backend answered.
	 */
	record Sent(long startNanos, String backend) {
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Discovery {

		@Bean
		ReactiveDiscoveryClient mutableDiscoveryClient() {
			return new ReactiveDiscoveryClient() {

				@Override
				public String description() {
					return "instances the test changes";
				}

				@Override
				public Flux<ServiceInstance> getInstances(String serviceId) {
					return "dyn".equals(serviceId) ? Flux.fromIterable(List.copyOf(instances)) : Flux.empty();
				}

				@Override
				public Flux<String> getServices() {
					return Flux.just("dyn");
				}

			};
		}

	}

}
