package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.runtime.Drain;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Each attempt is a {@code gateway.lb.attempt} span, a child of the exchange's, in the
 * exchange's trace, with the endpoint it went to and what kind of attempt it was; the
 * gateway's own client span of the attempt is the attempt's child. Micrometer Tracing's
 * test tracer, through the observation registry the application already has.
 */
@SpringBootTest(classes = { TestGateway.class, TracingIT.Tracing.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TracingIT extends GatewayIntegrationTest {

	/**
	 * Three backends in the order the balancer keeps them (by port): the first is closed
	 * (its attempts are refused); once the test arms them, whichever of the other two
	 * gets the next request answers it slowly, and the other answers at once. Least
	 * requests with every count at 0 takes the first, so a request goes: refused, retried
	 * on one of the others, hedged on the last.
	 */
	static final List<TestBackend> backends = byPort(
			List.of(TestBackend.start("a"), TestBackend.start("b"), TestBackend.start("c")));

	static final TestBackend refused = backends.get(0);

	static final List<TestBackend> live = backends.subList(1, 3);

	/**
	 * The endpoints' addresses, read before the first is closed.
	 */
	static final List<String> addresses = backends.stream().map((backend) -> "127.0.0.1:" + backend.port()).toList();

	static {
		// Closed before the gateway starts: its port refuses connections.
		refused.close();
	}

	@Autowired
	SimpleTracer tracer;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		gateway.route("traced")
			.uris("traced", addresses.stream().map((address) -> "http://" + address).toList())
			.set("gateway.lb.services.traced.algorithm", "least-requests")
			.set("gateway.lb.services.traced.retry.attempts", 2)
			.set("gateway.lb.services.traced.retry.budget-min-per-second", 1_000)
			.set("gateway.lb.services.traced.health.passive.consecutive-failures", 100_000)
			.set("gateway.lb.services.traced.hedge.max-extra-load", 1)
			.set("gateway.lb.services.traced.hedge.min-delay", "5ms");
	}

	@AfterAll
	static void stopBackends() {
		live.forEach(TestBackend::close);
	}

	@Test
	void aRequestRetriedOnceAndHedgedShowsItsThreeAttemptsInOneTrace() {
		// The hedge delay is learnt from the service's latencies first.
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			Flux.range(0, 8).flatMap((i) -> this.client.get("/traced/", Map.of())).blockLast();
			return ready("traced").feature(HedgeState.class).hedging().delayNanos() >= 0;
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("traced") == 0);
		AtomicBoolean armed = new AtomicBoolean(true);
		live.forEach((backend) -> backend.delays(() -> armed.getAndSet(false) ? 3_000 : 0));
		try {
			this.tracer.getSpans().clear();
			String answered = this.client.getNow("/traced/").backend();
			await().atMost(Duration.ofSeconds(10)).until(() -> attemptSpans().size() == 3);
			List<SimpleSpan> attempts = attemptSpans();
			assertThat(attempts).extracting((span) -> span.getTags().get("gateway.lb.attempt"))
				.containsExactly("1", "2", "3");
			assertThat(attempts).extracting((span) -> span.getTags().get("gateway.lb.kind"))
				.containsExactly("first", "retry", "hedge");
			assertThat(attempts.get(0).getTags()).containsEntry("gateway.lb.endpoint", addresses.get(0));
			assertThat(attempts).extracting((span) -> span.getTags().get("gateway.lb.endpoint"))
				.doesNotHaveDuplicates()
				.containsExactlyInAnyOrderElementsOf(addresses);
			TestBackend hedgedOn = live.stream()
				.filter((
						backend) -> attempts.get(2).getTags().get("gateway.lb.endpoint").endsWith(":" + backend.port()))
				.findFirst()
				.orElseThrow();
			assertThat(answered).as("the backend that answered").isEqualTo(hedgedOn.name());
			assertThat(attempts).extracting((span) -> span.getTags().get("gateway.lb.outcome"))
				.containsExactly("failure", "cancelled", "success");
			assertThat(attempts).allSatisfy((span) -> {
				assertThat(span.getTags()).containsEntry("gateway.lb.service", "traced")
					.containsEntry("gateway.lb.algorithm", "least-requests");
				assertThat(span.getName()).isEqualTo("gateway-lb " + span.getTags().get("gateway.lb.kind") + " traced");
			});
			assertThat(attempts.get(1).getTags().get("gateway.lb.reason"))
				.isEqualTo("connect-failed at " + addresses.get(0));
			assertThat(attempts.get(2).getTags()).containsEntry("gateway.lb.reason", "hedge-delay");
			assertThat(attempts.get(0).getError()).as("the refused attempt's error").isNotNull();
			// One trace, under the exchange's own span.
			String trace = attempts.get(0).getTraceId();
			String exchange = attempts.get(0).getParentId();
			assertThat(attempts).allSatisfy((span) -> {
				assertThat(span.getTraceId()).isEqualTo(trace);
				assertThat(span.getParentId()).isEqualTo(exchange);
			});
			assertThat(this.tracer.getSpans()).anySatisfy((span) -> {
				assertThat(span.getSpanId()).isEqualTo(exchange);
				assertThat(span.getParentId()).as("the exchange's span is the root").isNullOrEmpty();
			});
			// Each attempt's client span (Spring Cloud Gateway's http.client.requests) is
			// the attempt's child.
			for (SimpleSpan attempt : attempts) {
				assertThat(this.tracer.getSpans()).as("the client span of " + attempt.getTags()).anySatisfy((span) -> {
					assertThat(span.getParentId()).isEqualTo(attempt.getSpanId());
					assertThat(span.getTraceId()).isEqualTo(trace);
				});
			}
		}
		finally {
			live.forEach((backend) -> backend.delays(null));
		}
	}

	@Test
	void aDrainIsAnEventOfTheControlSide() {
		ready("traced");
		String endpoint = addresses.get(2);
		this.tracer.getSpans().clear();
		assertThat(this.runtimes.drain("traced", endpoint, true, true)).isEqualTo(Drain.DONE);
		assertThat(this.runtimes.drain("traced", endpoint, false, true)).isEqualTo(Drain.DONE);
		assertThat(this.tracer.getSpans()).extracting(SimpleSpan::getName)
			.containsExactly("gateway-lb drained traced", "gateway-lb undrained traced");
		assertThat(this.tracer.getSpans()).allSatisfy((span) -> {
			assertThat(span.getTags()).containsEntry("gateway.lb.service", "traced")
				.containsEntry("gateway.lb.endpoint", endpoint);
			assertThat(span.getEvents()).hasSize(1);
		});
		assertThat(this.tracer.getSpans().getFirst().getTags()).containsEntry("gateway.lb.event", "drained");
	}

	/**
	 * The attempt spans that ended (their tags are set at the end), by attempt number.
	 */
	private List<SimpleSpan> attemptSpans() {
		List<SimpleSpan> spans = new ArrayList<>();
		for (SimpleSpan span : this.tracer.getSpans()) {
			if (span.getTags().containsKey("gateway.lb.outcome")) {
				spans.add(span);
			}
		}
		spans.sort(Comparator.comparingInt((span) -> Integer.parseInt(span.getTags().get("gateway.lb.attempt"))));
		return spans;
	}

	private static List<TestBackend> byPort(List<TestBackend> backends) {
		return backends.stream().sorted(Comparator.comparingInt(TestBackend::port)).toList();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Tracing {

		@Bean
		SimpleTracer simpleTracer() {
			return new SimpleTracer();
		}

		@Bean
		DefaultTracingObservationHandler tracingObservationHandler(SimpleTracer tracer) {
			return new DefaultTracingObservationHandler(tracer);
		}

	}

}
