package dev.gatewaylb.fleet;

import java.util.List;

import dev.gatewaylb.bus.EndpointDrainEvent;
import dev.gatewaylb.bus.FleetEvent;
import dev.gatewaylb.bus.FleetStateEvent;
import dev.gatewaylb.bus.FleetStateRequestEvent;
import dev.gatewaylb.bus.RolloutVerdictEvent;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.cloud.bus.event.PathDestinationFactory;
import org.springframework.cloud.bus.event.RemoteApplicationEvent;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fleet's events through JSON as Spring Cloud Bus carries them: written by type, read
 * back as a {@link RemoteApplicationEvent} with every field. The publishing constructors
 * are public (the publisher lives in another package) and must not be taken by Jackson
 * for creators, which would call them with a {@code null} source and lose every event (a
 * replica then follows no roll-back and no drain).
 */
class FleetEventJsonTests {

	private final JsonMapper json = JsonMapper.builder()
		.registerSubtypes(RolloutVerdictEvent.class, EndpointDrainEvent.class, FleetStateRequestEvent.class,
				FleetStateEvent.class)
		.build();

	private final PathDestinationFactory destinations = new PathDestinationFactory();

	@Test
	void aRolloutVerdictKeepsEveryField() {
		RolloutVerdictEvent read = roundTrip(
				new RolloutVerdictEvent(this, "gateway:1", this.destinations.getDestination("gateway"), "fleet", 42,
						"shop", "plan-1", "roll-back", "errors", true));
		assertThat(read.getSplit()).isEqualTo("shop");
		assertThat(read.getPlan()).isEqualTo("plan-1");
		assertThat(read.getAction()).isEqualTo("roll-back");
		assertThat(read.getReason()).isEqualTo("errors");
		assertThat(read.isByOperator()).isTrue();
		assertEnvelope(read);
	}

	@Test
	void aDrainKeepsEveryField() {
		EndpointDrainEvent read = roundTrip(new EndpointDrainEvent(this, "gateway:1",
				this.destinations.getDestination("gateway"), "fleet", 42, "shop", "10.0.0.1:8080", true, true));
		assertThat(read.getService()).isEqualTo("shop");
		assertThat(read.getEndpoint()).isEqualTo("10.0.0.1:8080");
		assertThat(read.isDrain()).isTrue();
		assertThat(read.isForce()).isTrue();
		assertEnvelope(read);
	}

	@Test
	void aStateRequestAndItsAnswerKeepEveryField() {
		assertEnvelope(roundTrip(new FleetStateRequestEvent(this, "gateway:1",
				this.destinations.getDestination("gateway"), "fleet", 42)));
		FleetStateEvent read = roundTrip(
				new FleetStateEvent(this, "gateway:1", this.destinations.getDestination("gateway"), "fleet", 42,
						List.of(new FleetStateEvent.RolloutState("shop", "plan-1", "rolled-back", 2, "errors", 41)),
						List.of(new FleetStateEvent.DrainState("shop", "10.0.0.1:8080", 40))));
		assertThat(read.getRollouts())
			.containsExactly(new FleetStateEvent.RolloutState("shop", "plan-1", "rolled-back", 2, "errors", 41));
		assertThat(read.getDrains()).containsExactly(new FleetStateEvent.DrainState("shop", "10.0.0.1:8080", 40));
		assertEnvelope(read);
	}

	@Test
	void nullsInAPeersJsonMakeAnInvalidEventNotAnException() {
		String verdict = this.json
			.writeValueAsString(new RolloutVerdictEvent(this, "gateway:1", this.destinations.getDestination("gateway"),
					"fleet", 42, "shop", "plan-1", "roll-back", "errors", true));
		RolloutVerdictEvent nullPlan = (RolloutVerdictEvent) this.json.readValue(verdict.replace("\"plan-1\"", "null"),
				RemoteApplicationEvent.class);
		assertThat(nullPlan.signedFields()).hasSize(5);
		assertThat(nullPlan.invalidField()).isEqualTo("plan");
		String state = this.json.writeValueAsString(
				new FleetStateEvent(this, "gateway:1", this.destinations.getDestination("gateway"), "fleet", 42,
						List.of(new FleetStateEvent.RolloutState("shop", "plan-1", "rolled-back", 2, "errors", 41)),
						List.of()));
		FleetStateEvent nullEntry = (FleetStateEvent) this.json
			.readValue(state.replaceFirst("\\[\\{[^\\]]*\\}\\]", "[null]"), RemoteApplicationEvent.class);
		assertThat(nullEntry.getRollouts()).containsExactly((FleetStateEvent.RolloutState) null);
		assertThat(nullEntry.signedFields()).hasSize(2);
		assertThat(nullEntry.invalidField()).isEqualTo("rollouts");
	}

	@SuppressWarnings("unchecked")
	private <E extends FleetEvent> E roundTrip(E event) {
		RemoteApplicationEvent read = this.json.readValue(this.json.writeValueAsString(event),
				RemoteApplicationEvent.class);
		assertThat(read).isExactlyInstanceOf(event.getClass());
		assertThat(read.getId()).isEqualTo(event.getId());
		return (E) read;
	}

	private static void assertEnvelope(FleetEvent read) {
		assertThat(read.getOriginService()).isEqualTo("gateway:1");
		assertThat(read.getDestinationService()).isEqualTo("gateway:**");
		assertThat(read.getFleet()).isEqualTo("fleet");
		assertThat(read.getVersion()).isEqualTo(42);
	}

}
