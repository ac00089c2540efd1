package dev.gatewaylb.internal.observation;

import java.util.ArrayList;
import java.util.List;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ObservationsTests {

	private final List<Observation.Context> stopped = new ArrayList<>();

	private final List<Observation.Event> events = new ArrayList<>();

	private final ObservationRegistry registry = ObservationRegistry.create();

	ObservationsTests() {
		this.registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

			@Override
			public void onEvent(Observation.Event event, Observation.Context context) {
				ObservationsTests.this.events.add(event);
			}

			@Override
			public void onStop(Observation.Context context) {
				ObservationsTests.this.stopped.add(context);
			}

		});
	}

	@Test
	void noRegistryOrTheNoopOneObservesNothing() {
		assertThat(AttemptObservations.of(null)).isNull();
		assertThat(AttemptObservations.of(ObservationRegistry.NOOP)).isNull();
		assertThat(ObservedControlEvents.of(null)).isSameAs(dev.gatewaylb.internal.control.ControlEvents.NONE);
	}

	@Test
	void aRegistryWithoutHandlersYetIsAskedAgainLater() {
		ObservationRegistry later = ObservationRegistry.create();
		AttemptObservations observations = AttemptObservations.of(later);
		assertThat(observations).isNotNull();
		assertThat(observations.active()).isFalse();
		later.observationConfig().observationHandler((context) -> true);
		assertThat(observations.active()).isTrue();
	}

	@Test
	void aShedRequestIsOneAttemptWithoutEndpointWhoseOutcomeIsShed() {
		AttemptObservations observations = AttemptObservations.of(this.registry);
		observations.shed(new AttemptContext("orders", "least-requests", AttemptContext.FIRST, "", 1, "orders-canary",
				"canary-1/2", null), null, "concurrency-limit");
		assertThat(this.stopped).singleElement().satisfies((context) -> {
			assertThat(context.getName()).isEqualTo("gateway.lb.attempt");
			assertThat(context.getLowCardinalityKeyValues()).containsExactlyInAnyOrder(
					KeyValue.of("gateway.lb.service", "orders"), KeyValue.of("gateway.lb.algorithm", "least-requests"),
					KeyValue.of("gateway.lb.kind", "first"), KeyValue.of("gateway.lb.outcome", "shed"));
			assertThat(context.getHighCardinalityKeyValues()).containsExactlyInAnyOrder(
					KeyValue.of("gateway.lb.endpoint", ""), KeyValue.of("gateway.lb.attempt", "1"),
					KeyValue.of("gateway.lb.split.target", "orders-canary"),
					KeyValue.of("gateway.lb.rollout", "canary-1/2"),
					KeyValue.of("gateway.lb.reason", "concurrency-limit"));
		});
	}

	@Test
	void anEjectionAndARolloutVerdictAreEventsOfTheControlSide() {
		ObservedControlEvents events = new ObservedControlEvents(this.registry);
		events.ejected("orders", "10.0.0.7:8080", "latency");
		events.rolloutVerdict("shop", "canary-1", "rolled-back", 2, "error rate 5.1% > 1%");
		assertThat(this.stopped).extracting(Observation.Context::getName)
			.containsExactly("gateway.lb.control", "gateway.lb.control");
		assertThat(this.stopped.get(0).getLowCardinalityKeyValue("gateway.lb.event").getValue()).isEqualTo("ejected");
		assertThat(this.stopped.get(0).getHighCardinalityKeyValue("gateway.lb.reason").getValue()).isEqualTo("latency");
		assertThat(this.stopped.get(1).getLowCardinalityKeyValue("gateway.lb.verdict").getValue())
			.isEqualTo("rolled-back");
		assertThat(this.stopped.get(1).getHighCardinalityKeyValue("gateway.lb.rollout").getValue())
			.isEqualTo("canary-1/2");
		assertThat(this.events).extracting(Observation.Event::getName)
			.containsExactly("gateway.lb.ejected", "gateway.lb.rollout-verdict");
	}

}
