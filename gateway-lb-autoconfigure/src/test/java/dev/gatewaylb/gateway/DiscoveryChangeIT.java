package dev.gatewaylb.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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
 * Endpoints added and removed through discovery while traffic flows reach the balancer at
 * once: a removed endpoint stops receiving requests, an added one ramps up under slow
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

	@AfterAll
	static void stopBackends() {
		List.of(a, b, c).forEach(TestBackend::close);
	}

	@Test
	void seesAddedAndRemovedEndpointsAtOnceWhileTrafficFlows() {
		AtomicInteger failures = new AtomicInteger();
		AtomicLong served = new AtomicLong();
		AtomicBoolean running = new AtomicBoolean(true);
		try (GatewayClient client = new GatewayClient(this.port)) {
			Disposable traffic = Flux.range(0, 8)
				.flatMap((lane) -> Mono.defer(() -> client.get("/dyn/", Map.of())).doOnNext((answer) -> {
					if (answer.status() != 200) {
						failures.incrementAndGet();
					}
					served.incrementAndGet();
				}).repeat(running::get), 8)
				.subscribe();
			try {
				await().until(() -> a.requests() > 200 && b.requests() > 200);

				instances.add(instance(c));
				long joined = System.nanoTime();
				heartbeat();
				int cBefore = c.requests();
				long servedBefore = served.get();
				await().until(() -> served.get() - servedBefore >= 200);
				double rampingShare = (double) (c.requests() - cBefore) / (served.get() - servedBefore);
				// Until now c counted at most max(0.1, elapsed / window) of its weight,
				// so
				// at most f / (2 + f) of the traffic; without slow start it would get
				// 1/3.
				double factor = Math.max(0.1, (System.nanoTime() - joined) / (double) WINDOW.toNanos());
				assertThat(rampingShare).isPositive()
					.isLessThan(Math.min(factor, 1) / (2 + Math.min(factor, 1)) + 0.03);
				assertThat(factor).as("the check ran early enough in the ramp to mean something").isLessThan(0.5);

				await().atMost(WINDOW.plusSeconds(5)).until(() -> System.nanoTime() - joined > WINDOW.toNanos());
				int cRamped = c.requests();
				long servedRamped = served.get();
				await().until(() -> served.get() - servedRamped >= 900);
				double rampedShare = (double) (c.requests() - cRamped) / (served.get() - servedRamped);
				assertThat(rampedShare).isCloseTo(1.0 / 3, org.assertj.core.data.Offset.offset(0.02));

				instances.removeIf((instance) -> instance.getPort() == port(a));
				heartbeat();
				// Requests already picked may still reach a; nothing picked later does.
				long servedAtRemoval = served.get();
				await().until(() -> served.get() - servedAtRemoval >= 50);
				int aSettled = a.requests();
				long servedSettled = served.get();
				await().until(() -> served.get() - servedSettled >= 600);
				assertThat(a.requests()).isEqualTo(aSettled);
			}
			finally {
				running.set(false);
				traffic.dispose();
			}
		}
		assertThat(failures).hasValue(0);
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
