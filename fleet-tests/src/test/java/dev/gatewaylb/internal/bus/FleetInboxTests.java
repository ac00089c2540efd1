package dev.gatewaylb.internal.bus;

import dev.gatewaylb.bus.EndpointDrainEvent;
import dev.gatewaylb.bus.FleetEvent;
import dev.gatewaylb.bus.FleetStateEvent;
import dev.gatewaylb.bus.RolloutVerdictEvent;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.bus.event.Destination;
import org.springframework.cloud.bus.event.PathDestinationFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a replica lets in from its fleet's bus: its own fleet only; with a secret, only
 * events signed with it and unaltered; valid fields; a version not from the future; an
 * event id once; per subject, a newer decision than the one in force.
 */
class FleetInboxTests {

	private static final String SECRET = "0123456789abcdef0123456789abcdef";

	private static final Destination FLEET = new PathDestinationFactory().getDestination("edge");

	private final AtomicLong wallMillis = new AtomicLong(1_800_000_000_000L);

	private final FleetClock clock = new FleetClock(this.wallMillis::get);

	private final FleetInbox open = new FleetInbox("edge", null, List.of(), this.clock);

	private final FleetInbox signed = new FleetInbox("edge", SECRET, List.of(), this.clock);

	@Test
	void takesItsOwnFleetsEventsOnly() {
		assertThat(this.open.admit(drain("edge", "svc", "10.0.0.1:80"))).isNull();
		assertThat(this.open.admit(drain("internal", "svc", "10.0.0.1:80")))
			.isEqualTo(FleetInbox.Rejection.OTHER_FLEET);
		assertThat(this.open.rejected(FleetInbox.Rejection.OTHER_FLEET)).isEqualTo(1);
	}

	@Test
	void withASecretTakesOnlyEventsSignedWithItAndUnaltered() {
		EndpointDrainEvent unsigned = drain("edge", "svc", "10.0.0.1:80");
		assertThat(this.signed.admit(unsigned)).isEqualTo(FleetInbox.Rejection.UNSIGNED);

		EndpointDrainEvent foreign = new FleetInbox("edge", "another secret of at least 32 bytes!", List.of(),
				this.clock)
			.sign(drain("edge", "svc", "10.0.0.1:80"));
		assertThat(this.signed.admit(foreign)).isEqualTo(FleetInbox.Rejection.BAD_SIGNATURE);

		EndpointDrainEvent altered = this.signed.sign(drain("edge", "svc", "10.0.0.1:80"));
		altered.setDrain(false);
		assertThat(this.signed.admit(altered)).as("an undrain made of a drain")
			.isEqualTo(FleetInbox.Rejection.BAD_SIGNATURE);

		EndpointDrainEvent garbled = drain("edge", "svc", "10.0.0.1:80");
		garbled.setSignature("not base64 at all!");
		assertThat(this.signed.admit(garbled)).isEqualTo(FleetInbox.Rejection.BAD_SIGNATURE);

		EndpointDrainEvent good = this.signed.sign(drain("edge", "svc", "10.0.0.1:80"));
		assertThat(good.getSignature()).hasSize(43);
		assertThat(this.signed.admit(good)).isNull();
		assertThat(this.open.admit(this.signed.sign(drain("edge", "svc", "10.0.0.2:80"))))
			.as("a replica without a secret ignores the signature")
			.isNull();
	}

	@Test
	void aRotationTakesTheOldAndTheNewSecretAndSignsWithTheOneInForce() {
		String next = "the next secret, also 32 bytes long";
		FleetInbox oldOnly = new FleetInbox("edge", SECRET, List.of(), this.clock);
		FleetInbox newOnly = new FleetInbox("edge", next, List.of(), this.clock);
		// Step 1 of a rotation: every replica still signs with the old secret and already
		// takes the new one.
		FleetInbox rotating = new FleetInbox("edge", SECRET, List.of(next), this.clock);
		assertThat(rotating.admit(oldOnly.sign(drain("edge", "svc", "10.0.0.1:80")))).isNull();
		assertThat(rotating.admit(newOnly.sign(drain("edge", "svc", "10.0.0.2:80")))).isNull();
		assertThat(oldOnly.admit(rotating.sign(drain("edge", "svc", "10.0.0.3:80")))).as("signed with the old")
			.isNull();
		// Step 2, live: the new secret signs, the old one is still taken.
		rotating.rekey(next, List.of(SECRET));
		assertThat(newOnly.admit(rotating.sign(drain("edge", "svc", "10.0.0.4:80")))).as("signed with the new")
			.isNull();
		assertThat(rotating.admit(oldOnly.sign(drain("edge", "svc", "10.0.0.5:80")))).isNull();
		// Step 3: the old secret is gone.
		rotating.rekey(next, List.of());
		assertThat(rotating.admit(oldOnly.sign(drain("edge", "svc", "10.0.0.6:80"))))
			.isEqualTo(FleetInbox.Rejection.BAD_SIGNATURE);
		assertThat(rotating.admit(newOnly.sign(drain("edge", "svc", "10.0.0.7:80")))).isNull();
	}

	@Test
	void theSignatureCoversEveryFieldAndTheEnvelope() {
		RolloutVerdictEvent verdict = this.signed.sign(verdict("shop", "roll-back", "error rate"));
		String text = FleetInbox.signedText(verdict);
		assertThat(text).contains(verdict.getId(), "gateway:1", "edge", "shop", "roll-back", "error rate", "false");
		verdict.setByOperator(true);
		assertThat(this.signed.admit(verdict)).as("a judgement's roll-back made an operator's")
			.isEqualTo(FleetInbox.Rejection.BAD_SIGNATURE);
		assertThat(FleetInbox.signedText(verdict("ab", "c", null))).as("lengths keep fields apart")
			.isNotEqualTo(FleetInbox.signedText(verdict("a", "bc", null)));
	}

	@Test
	void refusesMissingUnboundedOrUnprintableFieldsAndVersionsFromTheFuture() {
		EndpointDrainEvent noService = drain("edge", "svc", "10.0.0.1:80");
		noService.setService(null);
		assertThat(noService.invalidField()).isEqualTo("service");
		assertThat(this.open.admit(noService)).isEqualTo(FleetInbox.Rejection.INVALID);
		assertThat(this.open.admit(drain("edge", "svc\nINFO forged line", "10.0.0.1:80")))
			.isEqualTo(FleetInbox.Rejection.INVALID);
		assertThat(this.open.admit(drain("edge", "s".repeat(257), "10.0.0.1:80")))
			.isEqualTo(FleetInbox.Rejection.INVALID);
		assertThat(this.open.admit(verdict("shop", "roll-back", "x".repeat(1025))))
			.isEqualTo(FleetInbox.Rejection.INVALID);
		assertThat(this.open.admit(verdict("shop", "roll-back", "line\nbreaks are escaped when logged")))
			.as("a reason may hold anything short")
			.isNull();
		EndpointDrainEvent unversioned = drain("edge", "svc", "10.0.0.1:80");
		unversioned.setVersion(0);
		assertThat(this.open.admit(unversioned)).isEqualTo(FleetInbox.Rejection.INVALID);
		EndpointDrainEvent future = drain("edge", "svc", "10.0.0.1:80");
		future
			.setVersion((this.wallMillis.get() + FleetInbox.MAX_CLOCK_SKEW.toMillis() + 1) << FleetClock.COUNTER_BITS);
		assertThat(this.open.admit(future)).isEqualTo(FleetInbox.Rejection.INVALID);
		assertThat(this.open.rejected(FleetInbox.Rejection.INVALID)).isEqualTo(6);
	}

	@Test
	void anEventWithNullFieldsIsRefusedAsInvalidAndNeverThrows() {
		// What a peer's JSON with "plan": null, or a null in a list, binds to: each is
		// checked by both inboxes, the signed one computing its signature first.
		RolloutVerdictEvent noPlan = verdict("shop", "roll-back", "why");
		noPlan.setPlan(null);
		RolloutVerdictEvent noAction = verdict("shop", "roll-back", "why");
		noAction.setAction(null);
		RolloutVerdictEvent noSplit = verdict("shop", "roll-back", "why");
		noSplit.setSplit(null);
		EndpointDrainEvent noEndpoint = drain("edge", "svc", "10.0.0.1:80");
		noEndpoint.setEndpoint(null);
		FleetStateEvent nullEntries = state();
		nullEntries.setRollouts(Arrays.asList(null, new FleetStateEvent.RolloutState(null, null, null, 0, null, 1)));
		nullEntries.setDrains(Arrays.asList(null, new FleetStateEvent.DrainState(null, null, 1)));
		FleetStateEvent nullLists = state();
		nullLists.setRollouts(null);
		nullLists.setDrains(null);
		for (FleetInbox inbox : List.of(this.open, this.signed)) {
			for (FleetEvent event : List.of(noPlan, noAction, noSplit, noEndpoint, nullEntries)) {
				FleetEvent checked = (inbox == this.signed) ? this.signed.sign(event) : event;
				assertThat(inbox.admit(checked))
					.as("%s through the %s inbox", event.invalidField(), (inbox == this.signed) ? "signed" : "open")
					.isEqualTo(FleetInbox.Rejection.INVALID);
			}
		}
		assertThat(this.open.admit(nullLists)).as("no lists: an empty state").isNull();
	}

	@Test
	void refusesAnEventOlderThanAnHourAsAReplay() {
		EndpointDrainEvent old = drain("edge", "svc", "10.0.0.1:80");
		old.setVersion((this.wallMillis.get() - FleetInbox.MAX_EVENT_AGE.toMillis() - 1) << FleetClock.COUNTER_BITS);
		assertThat(this.open.admit(old)).isEqualTo(FleetInbox.Rejection.EXPIRED);
		assertThat(FleetInbox.Rejection.EXPIRED.label()).isEqualTo("expired");
		EndpointDrainEvent recent = drain("edge", "svc", "10.0.0.1:80");
		recent.setVersion(
				(this.wallMillis.get() - FleetInbox.MAX_EVENT_AGE.toMillis() + 1000) << FleetClock.COUNTER_BITS);
		assertThat(this.open.admit(recent)).as("within the hour").isNull();
	}

	@Test
	void takesAnEventIdOnce() {
		EndpointDrainEvent drain = drain("edge", "svc", "10.0.0.1:80");
		assertThat(this.open.admit(drain)).isNull();
		assertThat(this.open.admit(drain)).as("redelivered").isEqualTo(FleetInbox.Rejection.DUPLICATE);
	}

	@Test
	void aDecisionOlderThanTheOneInForceIsStaleWhicheverReplicaTookIt() {
		String subject = FleetInbox.drainSubject("Svc", "10.0.0.1:80");
		long drained = this.clock.next();
		assertThat(this.open.advance(subject, drained)).isTrue();
		long undrained = this.clock.next();
		assertThat(this.open.advance(FleetInbox.drainSubject("svc", "10.0.0.1:80"), undrained)).isTrue();
		assertThat(this.open.advance(subject, drained)).as("the drain, arriving after the undrain").isFalse();
		assertThat(this.open.version(subject)).isEqualTo(undrained);
		assertThat(this.open.rejected(FleetInbox.Rejection.STALE)).isEqualTo(1);
	}

	@Test
	void theClockOrdersADecisionAfterEveryVersionHeardWhateverTheWallClockSays() {
		long first = this.clock.next();
		assertThat(this.clock.next()).as("within one millisecond").isEqualTo(first + 1);
		// A peer whose wall clock is a minute ahead.
		long peer = (this.wallMillis.get() + 60_000) << FleetClock.COUNTER_BITS;
		EndpointDrainEvent heard = drain("edge", "svc", "10.0.0.1:80");
		heard.setVersion(peer);
		assertThat(this.open.admit(heard)).isNull();
		assertThat(this.clock.next()).isGreaterThan(peer);
		this.wallMillis.addAndGet(120_000);
		assertThat(this.clock.next()).isEqualTo(this.wallMillis.get() << FleetClock.COUNTER_BITS);
	}

	private EndpointDrainEvent drain(String fleet, String service, String endpoint) {
		return new EndpointDrainEvent(this, "gateway:1", FLEET, fleet, this.clock.next(), service, endpoint, true,
				false);
	}

	private FleetStateEvent state() {
		return new FleetStateEvent(this, "gateway:1", FLEET, "edge", this.clock.next(), List.of(), List.of());
	}

	private RolloutVerdictEvent verdict(String split, String action, String reason) {
		return new RolloutVerdictEvent(this, "gateway:1", FLEET, "edge", this.clock.next(), split,
				"abc shop-canary [50, 100]", action, reason, false);
	}

}
