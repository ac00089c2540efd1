package dev.gatewaylb.gateway;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.upstream.Upstreams;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionPoolMetrics;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The pools' lifecycle: active probes have connections of their own, and a refresh that
 * rebuilds a service's pools lets the responses they carry finish, sends new requests to
 * the new pools, and closes the old ones once idle.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UpstreamLifecycleIT extends GatewayIntegrationTest {

	static final TestBackend busy = TestBackend.start("busy");

	static final TestBackend streaming = TestBackend.start("streaming");

	static final TestBackend fresh = TestBackend.start("fresh");

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("busy")
			.instances("busy", List.of(busy))
			.set("gateway.lb.services.busy.pool.max-connections", 1)
			.set("gateway.lb.services.busy.pool.max-pending", 10)
			.set("gateway.lb.services.busy.health.active.enabled", true)
			.set("gateway.lb.services.busy.health.active.path", "/health")
			.set("gateway.lb.services.busy.health.active.interval", "200ms")
			.set("gateway.lb.services.busy.health.active.timeout", "1s")
			.route("streaming")
			.instances("streaming", List.of(streaming))
			.route("fresh")
			.instances("fresh", List.of(fresh))
			.set("management.endpoints.web.exposure.include", "prometheus");
	}

	@Autowired
	ConfigurableApplicationContext context;

	@Autowired
	Upstreams upstreams;

	@AfterAll
	static void stopBackends() {
		List.of(busy, streaming, fresh).forEach(TestBackend::close);
	}

	@Test
	void probesAnEndpointWhoseOnlyConnectionIsTakenOnAConnectionOfTheirOwn() {
		int requestsBefore = busy.requests();
		// Held at the backend until the test lets it go: the traffic's only connection
		// stays taken however long the test takes.
		Mono<GatewayClient.Answer> held = this.client.get("/busy/held?hold=1", Map.of()).cache();
		Disposable holding = held.subscribe();
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> busy.held() == 1);
			// Probes queued behind the held request would never reach the endpoint, and
			// would time out and mark it unhealthy: three that reach it, while it stays
			// healthy, went on connections of their own.
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
				assertThat(state().isHealthy()).isTrue();
				return busy.requests() - requestsBefore - 1 >= 3;
			});
			assertThat(busy.held()).as("the traffic's request, still held").isEqualTo(1);
			busy.release();
			assertThat(held.block(Duration.ofSeconds(5)).status()).isEqualTo(200);
		}
		finally {
			busy.release();
			holding.dispose();
		}
	}

	@Test
	void letsResponsesFinishOnPoolsARefreshReplacedAndClosesThemOnceIdle() throws Exception {
		assertThat(this.client.getNow("/streaming/warm-up").status()).isEqualTo(200);
		// Registered on the control thread, a moment after the pool opened.
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(poolSeries("gateway-lb-streaming\"")).isNotEmpty());
		AtomicInteger failures = new AtomicInteger();
		AtomicBoolean running = new AtomicBoolean(true);
		Disposable traffic = Flux.range(0, 4)
			.flatMap((lane) -> Mono.defer(() -> this.client.get("/streaming/", Map.of())).doOnNext((answer) -> {
				if (answer.status() != 200) {
					failures.incrementAndGet();
				}
			}).repeat(running::get), 4)
			.subscribe();
		try {
			List<String> chunks = new CopyOnWriteArrayList<>();
			CompletableFuture<Void> download = this.client.stream("/streaming/?chunks=20&gap=100")
				.doOnNext(chunks::add)
				.then()
				.toFuture();
			await().atMost(Duration.ofSeconds(5)).until(() -> !chunks.isEmpty());
			refresh(Map.of("gateway.lb.services.streaming.pool.max-connections", 32));
			await().atMost(Duration.ofSeconds(5))
				.until(() -> this.runtimes.find("streaming").upstream().settings().maxConnections() == 32);
			await().atMost(Duration.ofSeconds(5)).until(() -> chunks.size() >= 6);
			// Mid-body, on the replaced pools: they are still open, their connection
			// busy.
			assertThat(poolGauge("active", "gateway-lb-streaming\"")).as("the old pool's active connections")
				.isGreaterThanOrEqualTo(1);
			download.get(20, TimeUnit.SECONDS);
			assertThat(chunks).as("the whole body, across the refresh").hasSize(20);
		}
		finally {
			running.set(false);
			traffic.dispose();
		}
		assertThat(failures).hasValue(0);
		assertThat(this.runtimes.find("streaming").upstream().settings().maxConnections()).isEqualTo(32);
		assertThat(this.client.getNow("/streaming/after").status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(poolSeries("gateway-lb-streaming\"")).as("the old pools closed").isEmpty());
		assertThat(poolSeries("gateway-lb-streaming-2\"")).as("the new pools serve").isNotEmpty();
	}

	@Test
	void registersAPoolsMetersOnTheControlThreadNeverOnTheEventLoopThatOpensThePool() {
		List<String> threads = new CopyOnWriteArrayList<>();
		this.upstreams.addListener(new Upstreams.PoolListener() {

			@Override
			public void opened(String serviceId, String poolName, String id, SocketAddress remoteAddress,
					ConnectionPoolMetrics metrics) {
				threads.add(serviceId + " " + Thread.currentThread().getName());
			}

			@Override
			public void closed(String serviceId, String poolName, String id, SocketAddress remoteAddress) {
			}

		});
		assertThat(this.client.getNow("/fresh/").status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> threads.contains("fresh gateway-lb-control"));
		assertThat(threads).allMatch((heard) -> heard.endsWith(" gateway-lb-control"));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(poolSeries("gateway-lb-fresh\"")).isNotEmpty());
	}

	private EndpointState state() {
		return this.runtimes.snapshot("busy").state(0);
	}

	private List<String> poolSeries(String name) {
		return List.of(this.client.getNow("/actuator/prometheus").body().split("\n"))
			.stream()
			.filter((line) -> line.startsWith("reactor_netty_connection_provider_total_connections")
					&& line.contains("name=\"" + name))
			.toList();
	}

	/**
	 * Returns the sum of one Reactor Netty pool gauge over a provider's pools.
	 */
	private double poolGauge(String gauge, String name) {
		return List.of(this.client.getNow("/actuator/prometheus").body().split("\n"))
			.stream()
			.filter((line) -> line.startsWith("reactor_netty_connection_provider_" + gauge + "_connections")
					&& line.contains("name=\"" + name))
			.mapToDouble((line) -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
			.sum();
	}

	private void refresh(Map<String, Object> properties) {
		this.context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("refresh", properties));
		this.context.publishEvent(new EnvironmentChangeEvent(this.context, properties.keySet()));
	}

}
