package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Picks pass an endpoint at its concurrency limit by, whatever the algorithm, and say
 * {@link Snapshot#AT_LIMIT} when every endpoint is at its limit.
 */
class ConcurrencyLimitPickTests {

	private final TestBalancers balancers = new TestBalancers();

	@ParameterizedTest(name = "{0}")
	@EnumSource(Algorithm.class)
	void neverPicksAnEndpointAtItsLimitWhileAnotherHasRoom(Algorithm algorithm) {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(algorithm, 1, 1, 1).snapshot();
		// b may have 2 in flight, the others 1000.
		snapshot.state(0).concurrencyLimit(1000);
		snapshot.state(1).concurrencyLimit(2);
		snapshot.state(2).concurrencyLimit(1000);
		List<InFlightGuard> held = new ArrayList<>();
		int[] picks = new int[3];
		for (int i = 0; i < 300; i++) {
			int index = snapshot.select("key-" + i);
			assertThat(index).as("pick %d", i).isBetween(0, 2);
			picks[index]++;
			held.add(snapshot.acquire(index));
			assertThat(snapshot.state(1).inFlight()).as("b's requests in flight after pick %d", i)
				.isLessThanOrEqualTo(2);
		}
		assertThat(picks[1]).isEqualTo(2);
		held.forEach(InFlightGuard::release);
	}

	@Test
	void saysAtLimitWhenEveryEndpointIsAtItsLimitAndPicksAgainOnceOneEnds() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1).snapshot();
		snapshot.state(0).concurrencyLimit(1);
		snapshot.state(1).concurrencyLimit(1);
		InFlightGuard first = snapshot.acquire(snapshot.select(null));
		InFlightGuard second = snapshot.acquire(snapshot.select(null));
		assertThat(snapshot.select(null)).isEqualTo(Snapshot.AT_LIMIT);
		assertThat(snapshot.selectAvoiding((address) -> false)).isEqualTo(-1);
		assertThat(snapshot.selectOverLimit(null)).isBetween(0, 1);
		second.release();
		assertThat(snapshot.select(null)).isEqualTo(second.endpoint() == snapshot.state(0) ? 0 : 1);
		first.release();
	}

	@Test
	void anEndpointWithoutALimitIsNeverAtIt() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1).snapshot();
		List<InFlightGuard> held = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			held.add(snapshot.acquire(snapshot.select(null)));
		}
		assertThat(snapshot.state(0).concurrencyLimit()).isEqualTo(EndpointState.UNLIMITED);
		assertThat(snapshot.state(0).atConcurrencyLimit()).isFalse();
		held.forEach(InFlightGuard::release);
		assertThat(snapshot.state(0).inFlight()).isZero();
	}

	@Test
	void aRetryAvoidsAnUntriedEndpointAtItsLimit() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1, 1).snapshot();
		snapshot.state(2).concurrencyLimit(1);
		InFlightGuard busy = snapshot.acquire(2);
		String tried = snapshot.endpoint(0).address();
		for (int i = 0; i < 50; i++) {
			assertThat(snapshot.selectAvoiding(tried::equals)).isEqualTo(1);
		}
		busy.release();
	}

}
