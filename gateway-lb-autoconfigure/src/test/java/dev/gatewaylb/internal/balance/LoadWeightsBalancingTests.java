package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Weights from the endpoints' load reports, as the balancer applies them
 * ({@link Balancer#loadWeights}).
 */
class LoadWeightsBalancingTests {

	private final TestBalancers balancers = new TestBalancers();

	@Test
	void roundRobinGivesEachEndpointItsWeightTimesItsStaticWeightOverAFullPeriod() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 2, 1);
		balancer.loadWeights(Map.of(address(0), 2.0, address(1), 0.5, address(2), 1.0));
		// Scales 32, 8, 16 times 1, 2, 1: 32, 16, 16, a period of 4 after the gcd.
		String period = TestBalancers.picks(balancer.snapshot(), 4);
		assertThat(period.chars().filter((c) -> c == 'a')).hasSize(2);
		assertThat(period.chars().filter((c) -> c == 'b')).hasSize(1);
		assertThat(period.chars().filter((c) -> c == 'c')).hasSize(1);
		// The sequence repeats: the table is one period.
		assertThat(TestBalancers.picks(balancer.snapshot(), 8)).isEqualTo(period.repeat(2));
	}

	@Test
	void anAddressNotNamedTakesTheMeanAndEmptyTurnsTheWeightsOff() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1);
		balancer.loadWeights(Map.of(address(0), 3.0));
		String period = TestBalancers.picks(balancer.snapshot(), 4);
		assertThat(period.chars().filter((c) -> c == 'a')).hasSize(3);
		balancer.loadWeights(Map.of());
		String plain = TestBalancers.picks(balancer.snapshot(), 4);
		assertThat(plain.chars().filter((c) -> c == 'a')).hasSize(2);
	}

	@Test
	void aWeightThatMovesByLessThanAStepRebuildsNothing() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1);
		assertThat(balancer.loadWeights(Map.of(address(0), 2.0, address(1), 0.5))).isTrue();
		long generation = balancer.snapshot().generation();
		// 2.0 x 16 = 32 and 2.01 x 16 = 32.16: the same step.
		assertThat(balancer.loadWeights(Map.of(address(0), 2.01, address(1), 0.5))).isFalse();
		assertThat(balancer.snapshot().generation()).isEqualTo(generation);
		assertThat(balancer.loadWeights(Map.of(address(0), 2.2, address(1), 0.5))).isTrue();
		assertThat(balancer.snapshot().generation()).isEqualTo(generation + 1);
	}

	@Test
	void leastRequestsPrefersTheEndpointThatReportsLessLoadAtEqualCounts() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.LEAST_REQUESTS, 1, 1, 1);
		balancer.loadWeights(Map.of(address(0), 0.5, address(1), 1.0, address(2), 2.0));
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		// All idle: c, which reports the least load, wins though it comes last.
		assertThat(snapshot.select(null)).isEqualTo(2);
		// (in-flight + 1) / weight: c with 1 in flight costs 1.0, b idle 1.0, a idle
		// 2.0: the tie goes to the lowest index.
		List<InFlightGuard> held = new ArrayList<>();
		held.add(snapshot.acquire(2));
		assertThat(snapshot.select(null)).isEqualTo(1);
		held.add(snapshot.acquire(1));
		held.add(snapshot.acquire(2));
		// a 2.0, b 2.0, c 1.5.
		assertThat(snapshot.select(null)).isEqualTo(2);
		held.forEach(InFlightGuard::release);
	}

	@Test
	void powerOfTwoChoicesWeighsInFlightByTheWeightsAndStillReachesALoadedEndpoint() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.POWER_OF_TWO_CHOICES, 1, 1);
		balancer.loadWeights(Map.of(address(0), 0.25, address(1), 1.75));
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		// Each pick held: b takes requests until (in-flight + 1) / 28 passes a's
		// (in-flight + 1) / 4, seven to one.
		int[] picks = new int[2];
		List<InFlightGuard> held = new ArrayList<>();
		for (int i = 0; i < 80; i++) {
			int index = snapshot.select(null);
			picks[index]++;
			held.add(snapshot.acquire(index));
		}
		assertThat(picks[0]).isEqualTo(10);
		assertThat(picks[1]).isEqualTo(70);
		held.forEach(InFlightGuard::release);
		assertThat(snapshot.state(0).inFlight()).isZero();
		assertThat(snapshot.state(1).inFlight()).isZero();
	}

	@Test
	void aRebuildForNewWeightsKeepsTheEndpointsState() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.LEAST_REQUESTS, 1, 1);
		InFlightGuard held = balancer.snapshot().acquire(0);
		balancer.loadWeights(Map.of(address(0), 4.0));
		assertThat(balancer.snapshot().state(0).inFlight()).isEqualTo(1);
		held.release();
		assertThat(balancer.snapshot().state(0).inFlight()).isZero();
	}

	private static String address(int i) {
		return TestBalancers.endpoint(i, 1).address();
	}

}
