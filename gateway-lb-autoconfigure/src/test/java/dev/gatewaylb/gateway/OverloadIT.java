package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import dev.gatewaylb.gateway.OpenLoad.Result;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.overload.core.LimitSamples;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Concurrency limits on real sockets. In front of backends that hold their requests until
 * the test lets them go: a service whose endpoints are all at their limit sheds with 503
 * and {@code Retry-After}, charging no endpoint; a partition under its share is admitted
 * while another past its own is shed; with {@code max-wait} a request waits for the next
 * place instead of being shed. In front of backends that queue like thread-pool servers
 * ({@link WorkerBackend}): an adaptive limit follows a backend whose workers are halved.
 * <p>
 * What a limit does for goodput and latency under overload (goodput, p99 against the
 * unloaded p50, nothing shed at 70% of the capacity, critical requests answered within a
 * second) are targets of the load benchmarks ({@code run.sh overload},
 * docs/benchmarks.md), not of this test.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OverloadIT extends GatewayIntegrationTest {

	static final int WORKERS = 4;

	static final Duration SERVICE_TIME = Duration.ofMillis(20);

	/**
	 * What the three halving backends serve a second.
	 */
	static final int CAPACITY = 3 * WORKERS * 1000 / 20;

	static final Duration PATIENCE = Duration.ofSeconds(1);

	static final List<TestBackend> limited = List.of(TestBackend.start("limited-1"), TestBackend.start("limited-2"),
			TestBackend.start("limited-3"));

	static final List<TestBackend> partitioned = List.of(TestBackend.start("partitioned-1"),
			TestBackend.start("partitioned-2"), TestBackend.start("partitioned-3"));

	static final TestBackend waiting = TestBackend.start("waiting");

	static final TestBackend provoked = TestBackend.start("provoked");

	static final List<WorkerBackend> halving = Stream.of("1", "2", "3")
		.map((n) -> WorkerBackend.start("h" + n, WORKERS, SERVICE_TIME))
		.toList();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		gateway.set("management.endpoints.web.exposure.include", "gatewaylb,prometheus");
		// The test's client is a trusted proxy: partition-by takes its header.
		gateway.set("gateway.lb.trusted-proxies", "127.0.0.1/32");
		gateway.route("limited")
			.instances("limited", limited)
			.set("gateway.lb.services.limited.concurrency.limit", "gradient2")
			.set("gateway.lb.services.limited.concurrency.initial-limit", 2);
		// One place per endpoint, three for the service: critical's share is 3 (0.8),
		// batch's 1 (0.2).
		gateway.route("partitioned")
			.instances("partitioned", partitioned)
			.set("gateway.lb.services.partitioned.concurrency.limit", "fixed")
			.set("gateway.lb.services.partitioned.concurrency.initial-limit", 1)
			.set("gateway.lb.services.partitioned.concurrency.partition-by", "header:X-Class")
			.set("gateway.lb.services.partitioned.concurrency.partitions.critical", 0.8)
			.set("gateway.lb.services.partitioned.concurrency.partitions.batch", 0.2);
		gateway.route("waiting")
			.instances("waiting", List.of(waiting))
			.set("gateway.lb.services.waiting.concurrency.limit", "fixed")
			.set("gateway.lb.services.waiting.concurrency.initial-limit", 1)
			.set("gateway.lb.services.waiting.concurrency.max-wait", "10s");
		// Passive health would eject the endpoint after five 500s; the limiter is what is
		// looked at here.
		gateway.route("provoked")
			.instances("provoked", List.of(provoked))
			.set("gateway.lb.services.provoked.concurrency.limit", "aimd")
			.set("gateway.lb.services.provoked.health.passive.consecutive-failures", 1000);
		gateway.route("halving")
			.uris("halving", halving.stream().map(WorkerBackend::uri).toList())
			.set("gateway.lb.services.halving.concurrency.limit", "gradient2");
	}

	@AfterAll
	static void stop() {
		Stream.of(limited, partitioned, List.of(waiting, provoked))
			.forEach((backends) -> backends.forEach(TestBackend::close));
		halving.forEach(WorkerBackend::close);
	}

	@Test
	void fiveHundredsAClientProvokesAreNoDropsForTheLimitAlgorithmsWhileA503Is() {
		ServiceRuntime runtime = ready("provoked");
		OverloadState overload = runtime.feature(OverloadState.class);
		EndpointState endpoint = state("provoked", address(provoked));
		LimitSamples samples = overload.samples(endpoint);
		long samplesBefore = samples.samples();
		long dropsBefore = samples.drops();
		for (int i = 0; i < 60; i++) {
			assertThat(this.client.getNow("/provoked/?status=500").status()).isEqualTo(500);
		}
		assertThat(samples.samples() - samplesBefore).as("every answer sampled").isEqualTo(60);
		assertThat(samples.drops() - dropsBefore).as("none a drop (aimd would have cut its limit 0.9x a window)")
			.isZero();
		assertThat(endpoint.consecutiveFailures()).as("still the endpoint's failures for passive health")
			.isGreaterThanOrEqualTo(60);
		assertThat(this.client.getNow("/provoked/?status=503").status()).isEqualTo(503);
		assertThat(samples.drops() - dropsBefore).as("a 503 is one of drop-statuses").isPositive();
	}

	@Test
	void aServiceWhoseEndpointsAreAllAtTheirLimitShedsWith503AndRetryAfterChargingNobody() {
		ServiceRuntime runtime = ready("limited");
		OverloadState overload = runtime.feature(OverloadState.class);
		List<EndpointState> endpoints = limited.stream().map((backend) -> state("limited", address(backend))).toList();
		// The limits are set by the control thread's first tick.
		await().atMost(Duration.ofSeconds(10))
			.until(() -> endpoints.stream().allMatch((state) -> state.concurrencyLimit() < EndpointState.UNLIMITED));
		// While every request is held no sample arrives, so no limit moves.
		limited.forEach(TestBackend::hold);
		List<CompletableFuture<GatewayClient.Answer>> admitted = new ArrayList<>();
		try {
			int places = endpoints.stream().mapToInt(EndpointState::concurrencyLimit).sum();
			assertThat(places).as("the initial limits").isEqualTo(3 * 2);
			for (int i = 0; i < places; i++) {
				admitted.add(this.client.get("/limited/" + i, Map.of()).toFuture());
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> held(limited) == places);
			assertThat(limited).as("each endpoint holds its limit")
				.allSatisfy((backend) -> assertThat(backend.held()).isEqualTo(2));

			GatewayClient.Answer shed = this.client.getNow("/limited/one-more");
			assertThat(shed.status()).isEqualTo(503);
			assertThat(shed.retryAfter()).isEqualTo("1");
			assertThat(shed.body()).contains("concurrency limit reached");
			assertThat(held(limited)).as("the shed request reached no backend").isEqualTo(places);
			assertThat(overload.shed().sum()).isEqualTo(1);
			assertThat(admitted).as("none answered while held").noneMatch(CompletableFuture::isDone);
		}
		finally {
			limited.forEach(TestBackend::release);
		}
		assertThat(admitted).allSatisfy((answer) -> assertThat(answer.join().status()).isEqualTo(200));
		assertThat(endpoints).as("failures charged").allSatisfy((state) -> {
			assertThat(state.consecutiveFailures()).isZero();
			assertThat(state.ejections()).isZero();
		});
		assertThat(metric("gateway_lb_rejected_total{reason=\"shed\",service=\"limited\"}")).isEqualTo(1);
		assertThat(this.client.getNow("/actuator/gatewaylb/limited").body()).contains("\"algorithm\":\"gradient2\"")
			.containsPattern("\"concurrencyLimit\":[0-9]+")
			.contains("\"shed\":1");
	}

	@Test
	void aPartitionUnderItsShareIsAdmittedWhileOnePastItsShareIsShed() {
		OverloadState overload = ready("partitioned").feature(OverloadState.class);
		// Until the control thread knows the service's limit, every partition is under
		// its share.
		await().atMost(Duration.ofSeconds(10)).until(() -> overload.partitions().serviceLimit() == 3);
		List<CompletableFuture<GatewayClient.Answer>> batch = new ArrayList<>();
		try {
			// Batch borrows the places critical leaves idle, one per endpoint, each held.
			for (int i = 0; i < 3; i++) {
				batch.add(this.client.get("/partitioned/b" + i + "?hold=1", Map.of("X-Class", "batch")).toFuture());
				int sent = i + 1;
				await().atMost(Duration.ofSeconds(10)).until(() -> held(partitioned) == sent);
			}
			// Three in flight for a share of one: once its load (averaged over about a
			// second) is past its share, batch is owed its share only, no burst
			// allowance.
			int batchIndex = overload.partitions().indexOf("batch");
			await().atMost(Duration.ofSeconds(10))
				.until(() -> overload.partitions().report().get(batchIndex).owed() == 1);
			GatewayClient.Answer shed = this.client.getNow("/partitioned/b3?hold=1", Map.of("X-Class", "batch"));
			assertThat(shed.status()).as("batch, past its share, every endpoint at its limit").isEqualTo(503);
			assertThat(shed.retryAfter()).isEqualTo("1");
			for (int i = 0; i < 3; i++) {
				GatewayClient.Answer critical = this.client.getNow("/partitioned/c" + i, Map.of("X-Class", "critical"));
				assertThat(critical.status()).as("critical %d, under its share, over the endpoints' limits", i)
					.isEqualTo(200);
			}
			assertThat(this.client.getNow("/partitioned/b4?hold=1", Map.of("X-Class", "batch")).status())
				.as("batch, still past its share")
				.isEqualTo(503);
			assertThat(overload.shed().sum()).isEqualTo(2);
			assertThat(held(partitioned)).isEqualTo(3);
		}
		finally {
			partitioned.forEach(TestBackend::release);
		}
		assertThat(batch).allSatisfy((answer) -> assertThat(answer.join().status()).isEqualTo(200));
		assertThat(this.client.getNow("/actuator/gatewaylb/partitioned").body())
			.contains("\"partitionBy\":\"header:X-Class\"")
			.contains("\"name\":\"critical\",\"share\":0.8")
			.contains("\"waiting\":0");
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(
					() -> assertThat(overload.partitions().report()).extracting((p) -> p.inFlight()).containsOnly(0));
		assertThat(partitioned).allSatisfy((backend) -> assertThat(state("partitioned", address(backend)))
			.satisfies((state) -> assertThat(state.consecutiveFailures()).isZero()));
	}

	@Test
	void withMaxWaitARequestThatFindsNoPlaceWaitsForTheNextOneFreedInsteadOfBeingShed() {
		OverloadState overload = ready("waiting").feature(OverloadState.class);
		EndpointState endpoint = state("waiting", address(waiting));
		await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.concurrencyLimit() == 1);
		CompletableFuture<GatewayClient.Answer> first;
		CompletableFuture<GatewayClient.Answer> second;
		try {
			first = this.client.get("/waiting/first?hold=1", Map.of()).toFuture();
			await().atMost(Duration.ofSeconds(10)).until(() -> waiting.held() == 1);
			// Not held itself: once it has the place it is answered at once.
			second = this.client.get("/waiting/second", Map.of()).toFuture();
			await().atMost(Duration.ofSeconds(10)).until(() -> overload.partitions().waiting() == 1);
			assertThat(second).as("waiting for the place, not shed").isNotDone();
			assertThat(waiting.requests()).as("requests the backend got").isEqualTo(1);
		}
		finally {
			waiting.release();
		}
		assertThat(first.join().status()).isEqualTo(200);
		assertThat(second.join().status()).isEqualTo(200);
		assertThat(second.join().backend()).isEqualTo("waiting");
		assertThat(overload.shed().sum()).isZero();
		assertThat(overload.partitions().waiting()).isZero();
	}

	@Test
	void aBackendWhoseWorkersAreHalvedGetsALowerLimitAndFewerRequests() {
		ready("halving");
		OpenLoad load = OpenLoad.to(this.port);
		try {
			// At 90% of the capacity, until stopped.
			CompletableFuture<Map<String, Result>> running = CompletableFuture.supplyAsync(
					() -> load.run("/halving/", CAPACITY * 9 / 10, Duration.ofSeconds(60), PATIENCE, (n) -> "all"));
			WorkerBackend halved = halving.get(0);
			EndpointState state = state("halving", "127.0.0.1:" + halved.port());
			EndpointState other = state("halving", "127.0.0.1:" + halving.get(1).port());
			await().atMost(Duration.ofSeconds(10)).until(() -> state.concurrencyLimit() < EndpointState.UNLIMITED);
			// A few windows of the full workers first.
			long settled = state.picks() + 300;
			await().atMost(Duration.ofSeconds(20)).until(() -> state.picks() >= settled);
			int limitBefore = state.concurrencyLimit();
			halved.workers(WORKERS / 2);
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(50))
				.until(() -> state.concurrencyLimit() < limitBefore
						&& state.concurrencyLimit() < other.concurrencyLimit());
			long picksBefore = state.picks();
			long otherBefore = other.picks();
			// The picks of the next 600 requests to the two.
			await().atMost(Duration.ofSeconds(20))
				.until(() -> state.picks() - picksBefore + other.picks() - otherBefore >= 600);
			long picks = state.picks() - picksBefore;
			long otherPicks = other.picks() - otherBefore;
			System.out.println("OverloadIT halved: limit " + limitBefore + " -> " + state.concurrencyLimit()
					+ " (another's " + other.concurrencyLimit() + "); picks since " + picks + " against " + otherPicks);
			assertThat(picks)
				.as("picks of the halved backend (limit %s, before %s) against another's", state.concurrencyLimit(),
						limitBefore)
				.isLessThan(otherPicks * 3 / 4);
			load.stop();
			running.join();
		}
		finally {
			halving.get(0).workers(WORKERS);
			load.stop();
			load.close();
		}
	}

	private static int held(List<TestBackend> backends) {
		return backends.stream().mapToInt(TestBackend::held).sum();
	}

	private static String address(TestBackend backend) {
		return "127.0.0.1:" + backend.port();
	}

}
