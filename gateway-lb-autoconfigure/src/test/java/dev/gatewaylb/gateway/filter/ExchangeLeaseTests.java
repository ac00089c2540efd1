package dev.gatewaylb.gateway.filter;

import java.util.List;
import java.util.Map;

import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.runtime.TestRuntimes;
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
	void releasesThePreviousAttemptWhenARetryPicksAgain() {
		ExchangeLease lease = this.service.lease();
		Attempt first = this.service.attempt(lease, 0);
		lease.hold(first);
		Attempt retry = this.service.attempt(lease, 1);
		lease.hold(retry);
		assertThat(first.isReleased()).isTrue();
		assertThat(retry.isReleased()).isFalse();
		assertThat(lease.attempt()).isSameAs(retry);
		assertThat(lease.attempts()).isEqualTo(2);
		assertThat(lease.tried(this.snapshot.endpoint(0).address())).isTrue();
		assertThat(lease.tried(this.snapshot.endpoint(1).address())).isTrue();
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
		assertThat(lease.attempt()).isNull();
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
	void givesTheFirstAttemptTheWholeHeaderDeadlineAndARetryWhatIsLeft() {
		ExchangeLease lease = this.service.lease();
		Attempt first = this.service.attempt(lease, 0);
		lease.hold(first);
		assertThat(lease.requestPrepared(first)).hasSeconds(30);
		this.service.fixture.clock.addAndGet(12_000_000_000L);
		Attempt retry = this.service.attempt(lease, 1);
		lease.hold(retry);
		assertThat(lease.requestPrepared(retry)).hasSeconds(18);
		assertThat(lease.hasTimeLeft(this.service.runtime, this.service.fixture.clock.get())).isTrue();
		this.service.fixture.clock.addAndGet(18_000_000_000L);
		assertThat(lease.hasTimeLeft(this.service.runtime, this.service.fixture.clock.get())).isFalse();
		lease.close();
	}

}
