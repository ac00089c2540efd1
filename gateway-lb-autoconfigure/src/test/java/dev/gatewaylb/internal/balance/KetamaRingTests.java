package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KetamaRingTests {

	private static final int KEYS = 100_000;

	private final TestBalancers balancers = new TestBalancers();

	@Test
	void mapsAKeyToTheSameEndpointAcrossRebuildsFreshInstancesAndListOrder() {
		List<Endpoint> endpoints = TestBalancers.endpoints(1, 1, 1, 1, 1);
		Balancer<Endpoint> first = this.balancers.balancer(Algorithm.CONSISTENT_HASH, 1, 1, 1, 1, 1);
		String[] before = owners(first.snapshot());
		first.update(endpoints);
		List<Endpoint> reversed = new ArrayList<>(endpoints);
		Collections.reverse(reversed);
		Balancer<Endpoint> fresh = new TestBalancers()
			.balancer(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH), reversed);
		assertThat(owners(first.snapshot())).isEqualTo(before);
		assertThat(owners(fresh.snapshot())).isEqualTo(before);
	}

	@Test
	void mapsKnownKeysToKnownEndpointsOnEveryJvm() {
		// Pinned, and computed independently from the documented bytes (a Python
		// script, see docs/algorithms.md): a change here remaps every session on upgrade.
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.CONSISTENT_HASH, 1, 1, 1).snapshot();
		assertThat(snapshot.endpoint(snapshot.select("203.0.113.7")).address()).isEqualTo("10.0.0.1:8080");
		assertThat(snapshot.endpoint(snapshot.select("user-42")).address()).isEqualTo("10.0.0.3:8080");
		assertThat(snapshot.endpoint(snapshot.select("alice")).address()).isEqualTo("10.0.0.2:8080");
		assertThat(snapshot.endpoint(snapshot.select("10.1.2.3")).address()).isEqualTo("10.0.0.2:8080");
	}

	@Test
	void movesAboutOneEleventhOfKeysWhenAnEleventhEndpointJoinsAndAllToIt() {
		Balancer<Endpoint> balancer = this.balancers.balancer(
				BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH),
				TestBalancers.endpoints(1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
		String[] before = owners(balancer.snapshot());
		Endpoint newcomer = TestBalancers.endpoint(10, 1);
		List<Endpoint> eleven = new ArrayList<>(TestBalancers.endpoints(1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
		eleven.add(newcomer);
		balancer.update(eleven);
		String[] after = owners(balancer.snapshot());
		int moved = 0;
		for (int i = 0; i < KEYS; i++) {
			if (!before[i].equals(after[i])) {
				moved++;
				assertThat(after[i]).as("key %d moved between two endpoints that stayed", i)
					.isEqualTo(newcomer.address());
			}
		}
		assertThat((double) moved / KEYS).isBetween(0.07, 0.11);
	}

	@Test
	void givesAnEndpointOfWeightTwoAboutTwiceTheKeys() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.CONSISTENT_HASH, 1, 2, 1, 1, 1).snapshot();
		int[] counts = new int[5];
		for (int i = 0; i < KEYS; i++) {
			counts[snapshot.select("key-" + i)]++;
		}
		double singleShare = (counts[0] + counts[2] + counts[3] + counts[4]) / 4.0;
		// An endpoint's share of the ring is the sum of its arcs, whose relative spread
		// is about 1/sqrt(points): 7.9% for 160 points, 5.6% for 320. The ratio of the
		// weight-2 share to the mean of four weight-1 shares then spreads by about
		// sqrt(0.056^2 + 0.079^2 / 4) = 6.9%; allow four of those.
		double spread = Math.sqrt(1.0 / 320 + 1.0 / 160 / 4);
		assertThat(counts[1] / singleShare).isBetween(2 * (1 - 4 * spread), 2 * (1 + 4 * spread));
	}

	@Test
	void keepsWeightRatiosWhenTheRingWouldExceedItsPointCap() {
		// 4,000,000 units of weight x 160 points is far over the cap; the ring is scaled
		// down to about 1,048,576 points and keeps the 3:1 ratio.
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.CONSISTENT_HASH, 3_000_000, 1_000_000)
			.snapshot();
		int[] counts = new int[2];
		for (int i = 0; i < KEYS; i++) {
			counts[snapshot.select("key-" + i)]++;
		}
		assertThat((double) counts[0] / counts[1]).isBetween(2.8, 3.2);
	}

	@Test
	void fallsBackToRoundRobinWithoutAKeyAndSkipsWeightZero() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.CONSISTENT_HASH, 2, 0, 1).snapshot();
		assertThat(TestBalancers.picks(snapshot, 6)).isEqualTo("acaaca");
		for (int i = 0; i < 1_000; i++) {
			assertThat(snapshot.select("k" + i)).isNotEqualTo(1);
		}
	}

	private static String[] owners(Snapshot<Endpoint> snapshot) {
		String[] owners = new String[KEYS];
		for (int i = 0; i < KEYS; i++) {
			owners[i] = snapshot.endpoint(snapshot.select("key-" + i)).address();
		}
		return owners;
	}

}
