package dev.gatewaylb.gateway;

import java.util.List;
import java.util.function.Function;

import dev.gatewaylb.balance.Balancer;
import dev.gatewaylb.balance.BalancerSettings;
import dev.gatewaylb.balance.Endpoint;
import dev.gatewaylb.balance.InFlightGuard;
import dev.gatewaylb.balance.Snapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ExchangeLeaseTests {

	private final Snapshot<Endpoint> snapshot = snapshot();

	@Test
	void releasesThePreviousAttemptWhenARetryPicksAgain() {
		ExchangeLease lease = new ExchangeLease(null);
		InFlightGuard first = this.snapshot.acquire(0);
		lease.hold(first);
		InFlightGuard retry = this.snapshot.acquire(1);
		lease.hold(retry);
		assertThat(first.isReleased()).isTrue();
		assertThat(retry.isReleased()).isFalse();
		assertThat(lease.guard()).isSameAs(retry);
		lease.close();
		assertThat(retry.isReleased()).isTrue();
		assertThat(this.snapshot.state(0).inFlight() + this.snapshot.state(1).inFlight()).isZero();
	}

	@Test
	void releasesAGuardHandedToItAfterClose() {
		ExchangeLease lease = new ExchangeLease(null);
		lease.close();
		InFlightGuard late = this.snapshot.acquire(0);
		lease.hold(late);
		assertThat(late.isReleased()).isTrue();
		assertThat(lease.guard()).isNull();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
	}

	@Test
	void closesIdempotently() {
		ExchangeLease lease = new ExchangeLease(null);
		lease.hold(this.snapshot.acquire(0));
		lease.close();
		lease.close();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
	}

	private static Snapshot<Endpoint> snapshot() {
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS, Function.identity(), System::nanoTime,
				java.util.concurrent.ThreadLocalRandom::current);
		return balancer.update(List.of(Endpoint.of("10.0.0.1", 80, 1), Endpoint.of("10.0.0.2", 80, 1)));
	}

}
