package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import dev.gatewaylb.internal.loadreports.LoadReportsState;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code load-reports} through a real gateway: backends on loopback that report their
 * load in {@code endpoint-load-metrics}; the reports weigh round-robin, never reach the
 * client while read, and garbage is counted.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class LoadReportsIT extends GatewayIntegrationTest {

	static final List<ReportingBackend> weighed = IntStream.rangeClosed(1, 3)
		.mapToObj((i) -> new ReportingBackend("w" + i))
		.toList();

	static final List<ReportingBackend> passed = List.of(new ReportingBackend("p1"));

	static final List<ReportingBackend> garbage = List.of(new ReportingBackend("g1"), new ReportingBackend("g2"));

	static final List<ReportingBackend> probed = List.of(new ReportingBackend("o1"), new ReportingBackend("o2"));

	@Autowired
	MeterRegistry meters;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		route(gateway, "weighed", weighed).set("gateway.lb.services.weighed.load-reports.enabled", true)
			.set("gateway.lb.services.weighed.load-reports.blackout-period", "1s");
		route(gateway, "passed", passed);
		route(gateway, "garbage", garbage).set("gateway.lb.services.garbage.load-reports.enabled", true)
			.set("gateway.lb.services.garbage.load-reports.blackout-period", "0s");
		route(gateway, "probed", probed).set("gateway.lb.services.probed.load-reports.enabled", true)
			.set("gateway.lb.services.probed.load-reports.probe.path", "/orca")
			.set("gateway.lb.services.probed.load-reports.probe.interval", "1s");
	}

	static TestGateway route(TestGateway gateway, String service, List<ReportingBackend> backends) {
		return gateway.route(service).uris(service, backends.stream().map(ReportingBackend::uri).toList());
	}

	@AfterAll
	static void stopBackends() {
		List.of(weighed, passed, garbage, probed).forEach((backends) -> backends.forEach(ReportingBackend::close));
	}

	@Test
	void theEndpointThatReportsLeastLoadGetsMostOfTheRequestsAndTheClientNeverSeesAReport() {
		weighed.get(0).report("TEXT application_utilization=0.9, rps_fractional=10");
		weighed.get(1).report("TEXT application_utilization=0.9, rps_fractional=10");
		weighed.get(2).report("TEXT application_utilization=0.1, rps_fractional=10");
		String third = weighed.get(2).address();
		LoadReportsState state = ready("weighed").feature(LoadReportsState.class);
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			assertThat(headersOf("/weighed/").names()).map(String::toLowerCase)
				.doesNotContain("endpoint-load-metrics", "endpoint-load-metrics-bin");
			return state.weight(third) > 3 * state.weight(weighed.get(0).address());
		});
		Map<String, Integer> backends = new HashMap<>();
		for (int i = 0; i < 90; i++) {
			backends.merge(this.client.getNow("/weighed/").backend(), 1, Integer::sum);
		}
		// Weights 10 / 0.9 against 10 / 0.1: nine times; past max-weight-ratio's ten
		// times
		// the others' mean it could not go. 9 / 11 of 90 is 73.6 in one period.
		assertThat(backends.getOrDefault("w3", 0)).as("%s", backends).isGreaterThan(60);
		assertThat(backends.get("w1")).as("%s", backends).isPositive();
		assertThat(backends.get("w2")).as("%s", backends).isPositive();
	}

	@Test
	void aServiceThatDoesNotReadReportsPassesThemOn() {
		passed.get(0).report("TEXT application_utilization=0.5");
		assertThat(headersOf("/passed/").get("endpoint-load-metrics")).isEqualTo("TEXT application_utilization=0.5");
	}

	@Test
	void garbageIsCountedByReasonAndNeverReachesTheClient() {
		garbage.get(0).report("TEXT application_utilization=NaN");
		garbage.get(1).report("TEXT cpu_utilization=-0.5");
		for (int i = 0; i < 10; i++) {
			assertThat(headersOf("/garbage/").contains("endpoint-load-metrics")).isFalse();
		}
		assertThat(rejected("not-a-number")).isEqualTo(5);
		assertThat(rejected("negative")).isEqualTo(5);
		LoadReportsState state = ready("garbage").feature(LoadReportsState.class);
		assertThat(state.weight(garbage.get(0).address())).isEqualTo(state.weight(garbage.get(1).address()));
	}

	@Test
	void aBackendThatReportsOutOfBandIsAskedOnTheProbePath() {
		probed.get(0).report("");
		probed.get(1).report("");
		probed.get(0).outOfBand("TEXT application_utilization=0.3, named_metrics.queue=4");
		probed.get(1).outOfBand("TEXT cpu_utilization=0.6");
		LoadReportsState state = ready("probed").feature(LoadReportsState.class);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			var report = state.report(this.runtimes.snapshot("probed"), this.runtimes.nanoTime());
			assertThat(report).isNotNull();
			assertThat(report.endpoints()).extracting((endpoint) -> endpoint.utilization()).containsExactly(0.3, 0.6);
			assertThat(report.endpoints().get(0).namedMetrics()).containsEntry("queue", 4.0);
		});
		assertThat(probed.get(0).probes()).isPositive();
	}

	private double rejected(String reason) {
		return this.meters.get("gateway.lb.load-reports.rejected")
			.tags("service", "garbage", "reason", reason)
			.functionCounter()
			.count();
	}

	private HttpHeaders headersOf(String path) {
		return HttpClient.create()
			.baseUrl("http://127.0.0.1:" + this.port)
			.get()
			.uri(path)
			.responseSingle(
					(response, body) -> body.asString().defaultIfEmpty("").thenReturn(response.responseHeaders()))
			.block(Duration.ofSeconds(10));
	}

	/**
	 * A loopback backend that answers every request with its name in {@code X-Backend}
	 * and the report it is told to give.
	 */
	static final class ReportingBackend implements AutoCloseable {

		private final AtomicReference<String> report = new AtomicReference<>("");

		private final AtomicReference<String> outOfBand = new AtomicReference<>("");

		private final java.util.concurrent.atomic.AtomicInteger probes = new java.util.concurrent.atomic.AtomicInteger();

		private final DisposableServer server;

		ReportingBackend(String name) {
			this.server = TestBackend.bind(HttpServer.create().host("127.0.0.1").handle((request, response) -> {
				if (request.uri().startsWith("/orca")) {
					this.probes.incrementAndGet();
					return response.header("endpoint-load-metrics", this.outOfBand.get()).send();
				}
				String report = this.report.get();
				if (!report.isEmpty()) {
					response.header("endpoint-load-metrics", report);
				}
				return response.header("X-Backend", name).sendString(reactor.core.publisher.Mono.just(name)).then();
			}));
		}

		void report(String report) {
			this.report.set(report);
		}

		void outOfBand(String report) {
			this.outOfBand.set(report);
		}

		int probes() {
			return this.probes.get();
		}

		String uri() {
			return "http://127.0.0.1:" + this.server.port();
		}

		String address() {
			return "127.0.0.1:" + this.server.port();
		}

		@Override
		public void close() {
			this.server.disposeNow();
		}

	}

}
