package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.stream.Stream;

import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.gateway.OpenLoad.Result;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adaptive concurrency limits on real sockets, in front of backends that queue like
 * thread-pool servers ({@link WorkerBackend}: 4 workers x 20 ms each, three of them, 600
 * requests a second together), under an open-loop client ({@link OpenLoad}).
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OverloadIT extends GatewayIntegrationTest {

	static final int WORKERS = 4;

	static final Duration SERVICE_TIME = Duration.ofMillis(20);

	/**
	 * What three backends serve a second.
	 */
	static final int CAPACITY = 3 * WORKERS * 1000 / 20;

	static final Duration RUN = Duration.ofSeconds(20);

	static final Duration PATIENCE = Duration.ofSeconds(1);

	static final Map<String, List<WorkerBackend>> backends = Map.of("limited", three("l"), "unlimited", three("u"),
			"steady", three("s"), "halving", three("h"), "partitioned", three("p"));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		backends.forEach((service, servers) -> {
			gateway.route(service).uris(service, servers.stream().map(WorkerBackend::uri).toList());
			if (!service.equals("unlimited")) {
				gateway.set("gateway.lb.services." + service + ".concurrency.limit", "gradient2");
			}
		});
		// Where an operator who knows the backends' four workers would start: from the
		// default 20 the first half second of an overload waits behind four times the
		// workers, and on a 20 s run that half second alone is the p99 (about 4 x the
		// unloaded p50, docs/overload.md).
		gateway.set("gateway.lb.services.limited.concurrency.initial-limit", 2 * WORKERS);
		// Vegas for the partitions: gradient2's limit falls to half the
		// backends' workers for the first 10 s of an overload (the onset's
		// backlog, abandoned requests the backends still serve, reads as
		// queueing), and a share of half the capacity cannot carry 75% of it;
		// vegas holds the limit near the workers (docs/overload.md).
		gateway.set("gateway.lb.services.partitioned.concurrency.limit", "vegas");
		gateway.set("gateway.lb.services.partitioned.concurrency.partition-by", "header:X-Class")
			.set("gateway.lb.services.partitioned.concurrency.partitions.critical", 0.8)
			.set("gateway.lb.services.partitioned.concurrency.partitions.batch", 0.2)
			.set("gateway.lb.services.partitioned.concurrency.max-wait", "250ms")
			.set("management.endpoints.web.exposure.include", "gatewaylb");
	}

	@AfterAll
	static void stop() {
		backends.values().forEach((servers) -> servers.forEach(WorkerBackend::close));
	}

	private static List<WorkerBackend> three(String prefix) {
		return Stream.of("1", "2", "3").map((n) -> WorkerBackend.start(prefix + n, WORKERS, SERVICE_TIME)).toList();
	}

	@Test
	void atHalfAgainTheCapacityALimitKeepsGoodputAndLatencyWhereTheBackendsCanServe() {
		double unloadedP50 = unloadedP50("limited");
		Result limited = overload("limited");
		Result unlimited = overload("unlimited");
		String seen = "limited: " + limited + "; unlimited: " + unlimited + "; unloaded p50 " + unloadedP50 + " ms";
		System.out.println("OverloadIT at 150%: " + seen);
		assertThat(limited.ok.sum()).as("answered 200 within a second, " + seen)
			.isGreaterThanOrEqualTo((long) (0.9 * CAPACITY * RUN.toSeconds()));
		assertThat(limited.p99Millis()).as("p99 of the answered, " + seen).isLessThanOrEqualTo(3 * unloadedP50);
		assertThat(limited.p99Millis()).as("p99 with the limit against without, " + seen)
			.isLessThan(unlimited.p99Millis() / 4);
		assertThat(limited.shed.sum()).as("shed, " + seen).isPositive();
		assertThat(limited.shedWithoutRetryAfter.sum()).as("shed without Retry-After: 1, " + seen).isZero();
		assertThat(unlimited.p99Millis()).as("p99 without a limit, " + seen).isGreaterThan(limited.p99Millis());
		assertThat(this.client.getNow("/actuator/gatewaylb/limited").body()).contains("\"algorithm\":\"gradient2\"")
			.containsPattern("\"concurrencyLimit\":[0-9]+")
			.containsPattern("\"shed\":[1-9]");
	}

	@Test
	void atSeventyPercentOfTheCapacityNothingIsShed() {
		unloadedP50("steady");
		OpenLoad load = OpenLoad.to(this.port);
		try {
			Result steady = load.run("/steady/", CAPACITY * 7 / 10, Duration.ofSeconds(30), PATIENCE, (n) -> "all")
				.get("all");
			System.out.println("OverloadIT at 70%: " + steady);
			assertThat(steady.shed.sum()).as("shed at 70%%: %s", steady).isZero();
			assertThat(steady.ok.sum()).as("answered: %s", steady).isEqualTo(steady.sent());
		}
		finally {
			load.close();
		}
	}

	@Test
	void aBackendWhoseWorkersAreHalvedGetsALowerLimitAndFewerRequestsWithinFiveSeconds() {
		unloadedP50("halving");
		OpenLoad load = OpenLoad.to(this.port);
		try {
			CompletableFuture<Map<String, Result>> running = CompletableFuture.supplyAsync(
					() -> load.run("/halving/", CAPACITY * 9 / 10, Duration.ofSeconds(14), PATIENCE, (n) -> "all"));
			WorkerBackend halved = backends.get("halving").get(0);
			EndpointState state = state("halving", "127.0.0.1:" + halved.port());
			EndpointState other = state("halving", "127.0.0.1:" + backends.get("halving").get(1).port());
			await().atMost(Duration.ofSeconds(8)).until(() -> state.concurrencyLimit() < EndpointState.UNLIMITED);
			await().pollDelay(Duration.ofSeconds(3)).until(() -> true);
			long picksBefore = state.picks();
			long otherBefore = other.picks();
			int limitBefore = state.concurrencyLimit();
			halved.workers(WORKERS / 2);
			long halvedAt = System.nanoTime();
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> state.concurrencyLimit() < limitBefore
						&& state.concurrencyLimit() < other.concurrencyLimit());
			long millis = (System.nanoTime() - halvedAt) / 1_000_000;
			await().pollDelay(Duration.ofSeconds(2)).until(() -> true);
			long picks = state.picks() - picksBefore;
			long otherPicks = other.picks() - otherBefore;
			System.out.println("OverloadIT halved: limit " + limitBefore + " -> " + state.concurrencyLimit() + " in "
					+ millis + " ms (another's " + other.concurrencyLimit() + "); picks since " + picks + " against "
					+ otherPicks);
			assertThat(picks)
				.as("picks of the halved backend after %s ms (limit %s, before %s) against another's", millis,
						state.concurrencyLimit(), limitBefore)
				.isLessThan(otherPicks * 3 / 4);
			running.join();
		}
		finally {
			backends.get("halving").get(0).workers(WORKERS);
			load.close();
		}
	}

	@Test
	void criticalRequestsKeepTheirShareWhileBatchOnesAreShed() {
		unloadedP50("partitioned");
		Map<String, Result> results = overload("partitioned", (n) -> (n % 2 == 0) ? "critical" : "batch");
		Result critical = results.get("critical");
		Result batch = results.get("batch");
		System.out.println("OverloadIT partitions at 150%: critical " + critical + "; batch " + batch);
		// The target. Critical offers 75% of the backends' capacity
		// against a share of 80% of the limit: its bursts past the share wait
		// (max-wait 250ms) for the places requests that end free, which go to
		// the partition furthest under its share; batch, past its share all the
		// time, waits behind and is shed.
		assertThat(critical.ok.sum()).as("critical answered within a second: %s; batch: %s", critical, batch)
			.isGreaterThanOrEqualTo((long) (0.99 * critical.sent()));
		assertThat(critical.shed.sum() * 20).as("critical shed against batch: %s; batch: %s", critical, batch)
			.isLessThan(batch.shed.sum());
		assertThat(batch.shed.sum()).as("batch shed: %s", batch).isPositive();
		assertThat(this.client.getNow("/actuator/gatewaylb/partitioned").body())
			.contains("\"partitionBy\":\"header:X-Class\"")
			.contains("\"name\":\"critical\",\"share\":0.8")
			.contains("\"waiting\":0");
		assertThat(runtime("partitioned").feature(OverloadState.class).partitions().waiting())
			.as("waiting after the run")
			.isZero();
	}

	private ServiceRuntime runtime(String service) {
		ServiceRuntime runtime = this.runtimes.find(service);
		assertThat(runtime).as("runtime of %s", service).isNotNull();
		return runtime;
	}

	/**
	 * Warms the service up one request at a time and returns the median latency.
	 */
	private double unloadedP50(String service) {
		ready(service);
		OpenLoad load = OpenLoad.to(this.port);
		try {
			return load.run("/" + service + "/", 60, Duration.ofSeconds(6), PATIENCE, (n) -> "all")
				.get("all")
				.p50Millis();
		}
		finally {
			load.close();
		}
	}

	private Result overload(String service) {
		return overload(service, (n) -> "all").get("all");
	}

	/**
	 * Offers 150% of the backends' capacity for {@link #RUN}, printing the limits as they
	 * move.
	 */
	private Map<String, Result> overload(String service, IntFunction<String> classOf) {
		OpenLoad load = OpenLoad.to(this.port);
		try {
			CompletableFuture<Map<String, Result>> running = CompletableFuture
				.supplyAsync(() -> load.run("/" + service + "/", CAPACITY * 3 / 2, RUN, PATIENCE, classOf));
			StringBuilder limits = new StringBuilder();
			StringBuilder serviceLimits = new StringBuilder();
			while (!running.isDone()) {
				await().pollDelay(Duration.ofMillis(500)).until(() -> true);
				limits.append(this.runtimes.snapshot(service).state(0).concurrencyLimit()).append(' ');
				serviceLimits.append(runtime(service).feature(OverloadState.class).partitions().serviceLimit())
					.append(' ');
			}
			// The figures docs/overload.md quotes.
			System.out.println("OverloadIT " + service + ": first endpoint's limit every 500 ms: " + limits
					+ "; the service's: " + serviceLimits);
			return running.join();
		}
		finally {
			load.close();
		}
	}

}
