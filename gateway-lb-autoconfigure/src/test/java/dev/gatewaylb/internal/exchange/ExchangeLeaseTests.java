package dev.gatewaylb.internal.exchange;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.upstream.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ExchangeLeaseTests {

	private final TwoEndpoints service = new TwoEndpoints();

	private final Snapshot<Member> snapshot = this.service.snapshot;

	@AfterEach
	void stop() {
		this.service.close();
	}

	@Test
	void releasesThePreviousAttemptWhenANewOneIsHeld() {
		ExchangeLease lease = this.service.lease();
		Attempt first = this.service.attempt(lease, 0);
		lease.hold(first);
		Attempt retry = this.service.attempt(lease, 1);
		lease.hold(retry);
		assertThat(first.isReleased()).isTrue();
		assertThat(retry.isReleased()).isFalse();
		assertThat(lease.current()).isSameAs(retry);
		lease.close();
		assertThat(retry.isReleased()).isTrue();
		assertThat(this.snapshot.state(0).inFlight() + this.snapshot.state(1).inFlight()).isZero();
	}

	@Test
	void releasesAnAttemptHandedToItAfterClose() {
		ExchangeLease lease = this.service.lease();
		lease.close();
		Attempt late = this.service.attempt(lease, 0);
		lease.hold(late);
		assertThat(late.isReleased()).isTrue();
		assertThat(lease.current()).isNull();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
	}

	@Test
	void closesIdempotently() {
		ExchangeLease lease = this.service.lease();
		lease.hold(this.service.attempt(lease, 0));
		lease.close();
		lease.close();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
	}

	@Test
	void anAttemptWhoseBodyArrivedIsNoLongerInFlightWhileTheLeaseStillHoldsIt() {
		// The client may send its next request as soon as it has the answer, before the
		// gateway has finished with this exchange: the endpoint must not look busy then.
		ExchangeLease lease = this.service.lease();
		Attempt attempt = this.service.attempt(lease, 0);
		lease.hold(attempt);
		attempt.requestSent();
		attempt.responseReceived(200);
		assertThat(this.snapshot.state(0).inFlight()).isEqualTo(1);
		attempt.responseCompleted();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
		assertThat(attempt.outcome()).isEqualTo(Outcome.Kind.SUCCESS);
		lease.close();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
	}

	@Test
	void aWebSocketSessionHoldsItsEndpointAfterTheExchangeUntilItReleasesIt() {
		ExchangeLease lease = this.service.lease();
		Attempt attempt = this.service.attempt(lease, 0);
		lease.hold(attempt);
		attempt.requestSent();
		attempt.responseReceived(101);
		attempt.upgraded();
		assertThat(attempt.outcome()).as("the handshake is the endpoint's success").isEqualTo(Outcome.Kind.SUCCESS);
		assertThat(lease.handOver(attempt)).isTrue();
		lease.close();
		assertThat(this.snapshot.state(0).inFlight()).as("the session is in flight").isEqualTo(1);
		assertThat(attempt.release()).isTrue();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
		assertThat(this.snapshot.state(0).consecutiveFailures()).isZero();
	}

	@Test
	void aSessionWhoseExchangeEndedBeforeTheHandshakeIsNotHandedOver() {
		ExchangeLease lease = this.service.lease();
		Attempt attempt = this.service.attempt(lease, 0);
		lease.hold(attempt);
		lease.close();
		assertThat(lease.handOver(attempt)).isFalse();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
	}

}
