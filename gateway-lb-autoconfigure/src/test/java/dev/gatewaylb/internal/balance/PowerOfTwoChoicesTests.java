package dev.gatewaylb.internal.balance;

import org.junit.jupiter.api.Test;

import static dev.gatewaylb.internal.balance.LeastRequestsTests.load;
import static org.assertj.core.api.Assertions.assertThat;

class PowerOfTwoChoicesTests {

	private final TestBalancers balancers = new TestBalancers();

	@Test
	void neverPicksTheMoreLoadedOfTwoEndpointsWhenLoadsDiffer() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.POWER_OF_TWO_CHOICES, 1, 1).snapshot();
		load(snapshot, new int[] { 3, 1 });
		for (int i = 0; i < 10_000; i++) {
			assertThat(snapshot.select(null)).isEqualTo(1);
		}
		load(snapshot, new int[] { 0, 5 });
		for (int i = 0; i < 10_000; i++) {
			assertThat(snapshot.select(null)).isZero();
		}
	}

	@Test
	void neverPicksTheMostLoadedOfMany() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.POWER_OF_TWO_CHOICES, 1, 1, 1, 1, 1).snapshot();
		load(snapshot, new int[] { 1, 2, 9, 3, 0 });
		for (int i = 0; i < 10_000; i++) {
			assertThat(snapshot.select(null)).isNotEqualTo(2);
		}
	}

	@Test
	void drawsEveryEndpointUniformlyWhenLoadsAreEqual() {
		int n = 10;
		int draws = 100_000;
		int[] ones = new int[n];
		java.util.Arrays.fill(ones, 1);
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.POWER_OF_TWO_CHOICES, ones).snapshot();
		int[] counts = new int[n];
		for (int i = 0; i < draws; i++) {
			counts[snapshot.select(null)]++;
		}
		// A tie goes to the first drawn, which is uniform.
		for (int i = 0; i < n; i++) {
			double p = 1.0 / n;
			double sigma = Math.sqrt(draws * p * (1 - p));
			assertThat((double) counts[i]).as("endpoint %d", i).isBetween(draws * p - 4 * sigma, draws * p + 4 * sigma);
		}
	}

	@Test
	void selectsTheOnlyEndpointAndNoneOfAnEmptySet() {
		assertThat(this.balancers.balancer(Algorithm.POWER_OF_TWO_CHOICES, 0, 2).snapshot().select(null)).isEqualTo(1);
		assertThat(this.balancers.balancer(Algorithm.POWER_OF_TWO_CHOICES).snapshot().select(null)).isEqualTo(-1);
	}

}
