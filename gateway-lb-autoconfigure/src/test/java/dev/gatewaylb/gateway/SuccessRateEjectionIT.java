package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Success-rate ejection on real sockets: five endpoints of which one answers 500 to every
 * tenth request (five failures in a row never happen, so consecutive failures would never
 * eject it), and five that all fail one request in 200 alike, which nobody should be
 * ejected for. Two-second intervals, so that the test takes seconds, not minutes.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SuccessRateEjectionIT extends GatewayIntegrationTest {

	static final List<TestBackend> sporadic = List.of(TestBackend.start("s1"), TestBackend.start("s2"),
			TestBackend.start("s3"), TestBackend.start("s4"), TestBackend.start("s5"));

	static final List<TestBackend> uniform = List.of(TestBackend.start("u1"), TestBackend.start("u2"),
			TestBackend.start("u3"), TestBackend.start("u4"), TestBackend.start("u5"));

	/**
	 * Two seconds: at a few hundred requests a second, enough answers per endpoint for
	 * the binomial test's 0.999 to tell one failure in ten from the others' none.
	 */
	static final long INTERVAL_MILLIS = 2_000;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		sporadic.get(2).failEvery(10);
		uniform.forEach((backend) -> backend.failEvery(200));
		TestGateway gateway = TestGateway.properties(registry);
		for (String service : List.of("sporadic", "uniform")) {
			List<TestBackend> backends = service.equals("sporadic") ? sporadic : uniform;
			String prefix = "gateway.lb.services." + service + ".health.passive.";
			gateway.route(service)
				.uris(service, backends.stream().map(TestBackend::uri).toList())
				.set(prefix + "consecutive-failures", 5)
				.set(prefix + "success-rate.enabled", true)
				.set(prefix + "success-rate.interval", INTERVAL_MILLIS + "ms")
				.set(prefix + "success-rate.request-volume", 20);
		}
		gateway.set("management.endpoints.web.exposure.include", "gatewaylb");
	}

	@AfterAll
	static void stop() {
		sporadic.forEach(TestBackend::close);
		uniform.forEach(TestBackend::close);
	}

	@Test
	void anEndpointFailingOneRequestInTenIsEjectedAndItsErrorsStop() {
		TestBackend failing = sporadic.get(2);
		ready("sporadic");
		try (ClientLoad load = new ClientLoad(this.client, "/sporadic/", 4)) {
			// Found in every interval with enough answers (SuccessRateOutliersTests), so
			// ejected at the first evaluation after one; ten intervals only bound a hang.
			await().atMost(Duration.ofMillis(10 * INTERVAL_MILLIS))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> isEjected("sporadic", failing));
			assertThat(load.failures()).as("errors before it").isPositive();
		}
		int after = 0;
		for (int i = 0; i < 500; i++) {
			if (this.client.getNow("/sporadic/").status() != 200) {
				after++;
			}
		}
		assertThat(after).as("errors of 500 requests once it is out").isLessThan(5);
	}

	@Test
	void endpointsThatAllFailAlikeAreNotEjectedAndTheirRatesAreShown() {
		ready("uniform");
		long start = System.nanoTime();
		int sent = 0;
		// Two and a half intervals: at least two evaluations, each on some hundreds of
		// answers.
		while (System.nanoTime() - start < 5 * INTERVAL_MILLIS * 1_000_000 / 2) {
			this.client.getNow("/uniform/");
			sent++;
		}
		Snapshot<Member> snapshot = this.runtimes.snapshot("uniform");
		for (int i = 0; i < snapshot.size(); i++) {
			EndpointState state = snapshot.state(i);
			assertThat(state.ejections()).as("%s ejections after %s requests over 2.5 intervals", state.address(), sent)
				.isZero();
			assertThat(state.lastSuccessRate()).as("%s's success rate", state.address()).isBetween(98.0, 100.0);
		}
		assertThat(this.client.getNow("/actuator/gatewaylb/uniform").body())
			.containsPattern("\"successRate\":(99|100)");
	}

	private boolean isEjected(String service, TestBackend backend) {
		return state(service, "127.0.0.1:" + backend.port()).isEjected(this.runtimes.nanoTime());
	}

}
