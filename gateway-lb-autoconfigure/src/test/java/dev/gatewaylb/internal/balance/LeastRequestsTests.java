package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.gatewaylb.internal.balance.TestBalancers.weights;
import static org.assertj.core.api.Assertions.assertThat;

class LeastRequestsTests {

	private final TestBalancers balancers = new TestBalancers();

	@ParameterizedTest(name = "in flight {0} selects {1}")
	@CsvSource(delimiter = '|', textBlock = """
			0,2,1 | a
			3,1,1 | b
			2,2,0 | c
			0,0,0 | a
			4,1,1,1 | b
			""")
	void selectsTheLeastLoadedWithTiesToTheLowestIndex(String inFlight, char expected) {
		int[] loads = weights(inFlight);
		int[] ones = new int[loads.length];
		java.util.Arrays.fill(ones, 1);
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.LEAST_REQUESTS, ones).snapshot();
		load(snapshot, loads);
		assertThat(TestBalancers.letter(snapshot.select(null))).isEqualTo(expected);
	}

	@Test
	void skipsEndpointsOfWeightZero() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.LEAST_REQUESTS, 0, 1, 1).snapshot();
		load(snapshot, new int[] { 0, 2, 1 });
		assertThat(snapshot.select(null)).isEqualTo(2);
	}

	@Test
	void agreesWithAFullScanOverRandomServices() {
		java.util.SplittableRandom random = new java.util.SplittableRandom(11);
		for (int round = 0; round < 2_000; round++) {
			int size = random.nextInt(1, 40);
			int[] weights = new int[size];
			int[] loads = new int[size];
			for (int i = 0; i < size; i++) {
				weights[i] = (random.nextInt(5) == 0) ? 0 : 1;
				// mostly busy, so that the scan often runs to the end; now and then idle
				loads[i] = (random.nextInt(8) == 0) ? 0 : random.nextInt(1, 6);
			}
			Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.LEAST_REQUESTS, weights).snapshot();
			load(snapshot, loads);
			int expected = -1;
			for (int i = 0; i < size; i++) {
				if (weights[i] > 0 && (expected < 0 || loads[i] < loads[expected])) {
					expected = i;
				}
			}
			assertThat(snapshot.select(null))
				.as("weights %s, loads %s", java.util.Arrays.toString(weights), java.util.Arrays.toString(loads))
				.isEqualTo(expected);
		}
	}

	@Test
	void spreadsAsRequestsStayInFlight() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.LEAST_REQUESTS, 1, 1, 1).snapshot();
		List<InFlightGuard> held = new ArrayList<>();
		StringBuilder picked = new StringBuilder();
		for (int i = 0; i < 6; i++) {
			int index = snapshot.select(null);
			held.add(snapshot.acquire(index));
			picked.append(TestBalancers.letter(index));
		}
		assertThat(picked).hasToString("abcabc");
		held.forEach(InFlightGuard::release);
		assertThat(snapshot.state(0).inFlight()).isZero();
	}

	@Test
	void returnsMinusOneWhenNothingCanBePicked() {
		assertThat(this.balancers.balancer(Algorithm.LEAST_REQUESTS).snapshot().select(null)).isEqualTo(-1);
		assertThat(this.balancers.balancer(Algorithm.LEAST_REQUESTS, 0, 0).snapshot().select(null)).isEqualTo(-1);
	}

	static void load(Snapshot<Endpoint> snapshot, int[] loads) {
		for (int i = 0; i < loads.length; i++) {
			for (int j = 0; j < loads[i]; j++) {
				snapshot.acquire(i);
			}
		}
	}

}
