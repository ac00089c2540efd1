package dev.gatewaylb.internal.balance;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class SlowStartTests {

	private static final long WINDOW = 10_000_000_000L;

	private final TestBalancers balancers = new TestBalancers();

	@ParameterizedTest(name = "weight 8 at {0}% of the window counts {1}")
	@CsvSource({ "0, 0.8", "5, 0.8", "25, 2", "50, 4", "100, 8", "250, 8" })
	void rampsLinearlyFromATenthToTheFullWeight(int percent, double expected) {
		assertThat(SlowStart.effectiveWeight(8, WINDOW * percent / 100, WINDOW)).isCloseTo(expected, within(1e-9));
	}

	@Test
	void doesNotRampWithoutAWindow() {
		assertThat(SlowStart.factor(0, 0)).isEqualTo(1.0);
	}

	@Test
	void rampsAnEndpointThatJoinsAServingSetInRoundRobin() {
		Balancer<Endpoint> balancer = this.balancers.balancer(settings(Algorithm.ROUND_ROBIN),
				TestBalancers.endpoints(1, 1));
		balancer.update(TestBalancers.endpoints(1, 1, 1));
		// Weights 1,1 and 0.1 are 10,10,1 after scaling: 1 pick in 21.
		assertThat(balancer.snapshot().effectiveWeight(2)).isEqualTo(0.1);
		assertThat(share(balancer, 'c', 21 * 4)).isEqualTo(4);
		this.balancers.advanceMillis(2_500);
		assertThat(balancer.snapshot().effectiveWeight(2)).isEqualTo(0.25);
		this.balancers.advanceMillis(-2_500);
		this.balancers.advanceMillis(5_000);
		// 1,1,0.5: 1 in 5.
		assertThat(share(balancer, 'c', 5 * 4)).isEqualTo(4);
		this.balancers.advanceMillis(5_000);
		assertThat(share(balancer, 'c', 3 * 4)).isEqualTo(4);
		assertThat(balancer.snapshot().effectiveWeight(2)).isEqualTo(1.0);
	}

	@Test
	void doesNotRampTheFirstEndpointsOrThosePresentWhenSlowStartIsTurnedOn() {
		Balancer<Endpoint> balancer = this.balancers.balancer(settings(Algorithm.ROUND_ROBIN),
				TestBalancers.endpoints(1, 1));
		assertThat(balancer.snapshot().effectiveWeight(0)).isEqualTo(1.0);
		Balancer<Endpoint> late = this.balancers.balancer(BalancerSettings.DEFAULTS, TestBalancers.endpoints(1, 1));
		late.update(TestBalancers.endpoints(1, 1, 1));
		late.update(settings(Algorithm.ROUND_ROBIN));
		assertThat(late.snapshot().effectiveWeight(2)).isEqualTo(1.0);
		assertThat(TestBalancers.picks(late.snapshot(), 3)).isEqualTo("abc");
	}

	@Test
	void makesARampingEndpointLookBusierToLeastRequests() {
		Balancer<Endpoint> balancer = this.balancers.balancer(settings(Algorithm.LEAST_REQUESTS),
				TestBalancers.endpoints(1, 1));
		balancer.update(TestBalancers.endpoints(1, 1, 1));
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		LeastRequestsTests.load(snapshot, new int[] { 5, 5, 0 });
		// (0 + 1) / 0.1 = 10 > 5 + 1
		assertThat(snapshot.select(null)).isZero();
		this.balancers.advanceMillis(10_000);
		assertThat(snapshot.select(null)).isEqualTo(2);
	}

	@Test
	void keepsTheRampStartAcrossRebuilds() {
		Balancer<Endpoint> balancer = this.balancers.balancer(settings(Algorithm.ROUND_ROBIN),
				TestBalancers.endpoints(1, 1));
		balancer.update(TestBalancers.endpoints(1, 1, 1));
		this.balancers.advanceMillis(5_000);
		// Discovery lists the set in another order: the same set, in the same canonical
		// order, the newcomer still half-way up its ramp.
		balancer
			.update(List.of(TestBalancers.endpoint(2, 1), TestBalancers.endpoint(0, 1), TestBalancers.endpoint(1, 1)));
		assertThat(balancer.snapshot().endpoint(2)).isEqualTo(TestBalancers.endpoint(2, 1));
		assertThat(balancer.snapshot().effectiveWeight(2)).isCloseTo(0.5, within(1e-9));
		assertThat(balancer.snapshot().effectiveWeight(0)).isEqualTo(1.0);
	}

	private static BalancerSettings settings(Algorithm algorithm) {
		return new BalancerSettings(algorithm, WINDOW, BalancerSettings.DEFAULTS.ewmaDecayNanos());
	}

	private static long share(Balancer<Endpoint> balancer, char letter, int picks) {
		return TestBalancers.picks(balancer.snapshot(), picks).chars().filter((c) -> c == letter).count();
	}

}
