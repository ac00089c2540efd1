package dev.gatewaylb.internal.balance;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Consistent hashing with bounded loads ({@code hash-balance-factor}). The ring order a
 * key spills along is taken from plain rings, independently of the walk: the endpoint
 * after the owner clockwise is where the key goes on a ring without the owner, and so on.
 */
class BoundedLoadTests {

	private static final String KEY = "user-42";

	private final TestBalancers balancers = new TestBalancers();

	private final List<InFlightGuard> held = new ArrayList<>();

	@AfterEach
	void releaseHeld() {
		this.held.forEach(InFlightGuard::release);
	}

	@Test
	void keepsAKeyOnItsOwnerWhileTheOwnerIsUnderItsBound() {
		Balancer<Endpoint> balancer = bounded(1.25, 1, 1, 1);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		int[] order = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1));
		// 14 in flight, the owner 6 of them: bound ceil(1.25 x 15 / 3) = 7.
		hold(snapshot, order[0], 6);
		hold(snapshot, order[1], 4);
		hold(snapshot, order[2], 4);
		for (int i = 0; i < 10; i++) {
			assertThat(snapshot.select(KEY)).isEqualTo(order[0]);
		}
	}

	@Test
	void spillsToTheNextEndpointClockwiseAtTheBoundThenToTheOneAfter() {
		Snapshot<Endpoint> snapshot = bounded(1.25, 1, 1, 1).snapshot();
		int[] order = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1));
		// 14 in flight, the owner 7 of them: at its bound of 7.
		hold(snapshot, order[0], 7);
		hold(snapshot, order[1], 3);
		hold(snapshot, order[2], 4);
		assertThat(snapshot.select(KEY)).isEqualTo(order[1]);
		release(order[1], 3);
		hold(snapshot, order[1], 7);
		hold(snapshot, order[2], -4);
		// 14 again, the owner and its successor at 7 each: the third takes it.
		assertThat(snapshot.select(KEY)).isEqualTo(order[2]);
	}

	@Test
	void comesBackToTheOwnerAsSoonAsItsLoadFalls() {
		Snapshot<Endpoint> snapshot = bounded(1.25, 1, 1, 1).snapshot();
		int[] order = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1));
		hold(snapshot, order[0], 7);
		hold(snapshot, order[1], 3);
		hold(snapshot, order[2], 4);
		assertThat(snapshot.select(KEY)).isEqualTo(order[1]);
		// 13 in flight, the owner 6: bound ceil(1.25 x 14 / 3) = 6, still full.
		release(order[0], 1);
		assertThat(snapshot.select(KEY)).isEqualTo(order[1]);
		// 12 in flight, the owner 5: bound ceil(1.25 x 13 / 3) = 6.
		release(order[0], 1);
		assertThat(snapshot.select(KEY)).isEqualTo(order[0]);
	}

	@Test
	void keepsEverySequentialRequestOnItsOwner() {
		Snapshot<Endpoint> bounded = bounded(1.25, 1, 1, 1, 1, 1).snapshot();
		Snapshot<Endpoint> plain = this.balancers.balancer(Algorithm.CONSISTENT_HASH, 1, 1, 1, 1, 1).snapshot();
		for (int i = 0; i < 2_000; i++) {
			String key = "key-" + i;
			int index = bounded.select(key);
			bounded.acquire(index).release();
			assertThat(index).as(key).isEqualTo(plain.select(key));
		}
	}

	@Test
	void ignoresTheLoadWithFactorZero() {
		Snapshot<Endpoint> snapshot = this.balancers
			.balancer(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH).withHashBalanceFactor(0),
					TestBalancers.endpoints(1, 1, 1))
			.snapshot();
		int owner = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1))[0];
		hold(snapshot, owner, 100);
		assertThat(snapshot.select(KEY)).isEqualTo(owner);
		for (int i = 0; i < 1_000; i++) {
			assertThat(snapshot.select("key-" + i)).isEqualTo(owner("key-" + i, TestBalancers.endpoints(1, 1, 1)));
		}
	}

	@Test
	void countsOnlyEndpointsThatTakePicksAndWalksPastADrainingOne() {
		Balancer<Endpoint> balancer = bounded(1.25, 1, 1, 1);
		int[] order = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1));
		Snapshot<Endpoint> before = balancer.snapshot();
		// The successor drains with 100 in flight, which must not raise the average.
		hold(before, order[1], 100);
		Snapshot<Endpoint> snapshot = balancer.drain(before.endpoint(order[1]).address(), true);
		// 3 in flight over two endpoints: bound ceil(1.25 x 4 / 2) = 3, the owner is
		// full.
		hold(snapshot, order[0], 3);
		assertThat(snapshot.select(KEY)).isEqualTo(order[2]);
		// 1 in flight: bound ceil(1.25 x 2 / 2) = 2.
		release(order[0], 2);
		assertThat(snapshot.select(KEY)).isEqualTo(order[0]);
	}

	@Test
	void walksPastAnEjectedEndpoint() {
		Balancer<Endpoint> balancer = bounded(1.25, 1, 1, 1);
		int[] order = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1));
		long now = this.balancers.clock.get();
		balancer.snapshot().state(order[1]).eject(now, now + 60_000_000_000L);
		Snapshot<Endpoint> snapshot = balancer.reevaluate();
		hold(snapshot, order[0], 3);
		assertThat(snapshot.select(KEY)).isEqualTo(order[2]);
	}

	@Test
	void givesAHeavierOwnerABoundInProportionToItsWeight() {
		// Weights 3 and 1: the weight-3 owner's bound is ceil(1.25 x (T + 1) x 3 / 4),
		// so alone it holds up to 14 (bound ceil(14.06) = 15 with 14 in flight) and
		// spills the 16th request (15 in flight: bound ceil(15) = 15).
		Balancer<Endpoint> balancer = bounded(1.25, 3, 1);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		String key = keyOwnedBy(0, TestBalancers.endpoints(3, 1));
		hold(snapshot, 0, 14);
		assertThat(snapshot.select(key)).isZero();
		hold(snapshot, 0, 1);
		assertThat(snapshot.select(key)).isEqualTo(1);
	}

	@ParameterizedTest(name = "factor {0}, weights {1}")
	@MethodSource("factorsAndWeights")
	void picksTheFirstEndpointInRingOrderUnderCeilOfFactorTimesItsShareOfInFlightPlusOne(String factor,
			String weightsCsv) {
		int[] weights = TestBalancers.weights(weightsCsv);
		List<Endpoint> endpoints = TestBalancers.endpoints(weights);
		Snapshot<Endpoint> snapshot = bounded(Double.parseDouble(factor), weights).snapshot();
		int[] order = ringOrder(KEY, endpoints);
		int totalWeight = 0;
		for (int weight : weights) {
			totalWeight += weight;
		}
		int[] loads = new int[weights.length];
		int cases = (int) Math.pow(10, weights.length);
		for (int c = 0; c < cases; c++) {
			for (int i = 0, rest = c; i < loads.length; i++, rest /= 10) {
				setLoad(snapshot, i, rest % 10);
				loads[i] = rest % 10;
			}
			int total = 0;
			for (int load : loads) {
				total += load;
			}
			int expected = order[0];
			for (int index : order) {
				// The specification, in exact decimals: ceil(c x (T + 1) x w / W).
				BigDecimal bound = new BigDecimal(factor)
					.multiply(BigDecimal.valueOf((long) (total + 1) * weights[index]))
					.divide(BigDecimal.valueOf(totalWeight), 0, RoundingMode.CEILING);
				if (BigDecimal.valueOf(loads[index]).compareTo(bound) < 0) {
					expected = index;
					break;
				}
			}
			assertThat(snapshot.select(KEY)).as("loads %s", Arrays.toString(loads)).isEqualTo(expected);
		}
	}

	@ParameterizedTest(name = "factor {0}, loads {1}, {2}, {3}")
	@CsvSource({ "2.2, 33, 6, 5", "1.8, 15, 5, 4", "1.35, 9, 5, 5" })
	void takesABoundThatIsAWholeNumberAsItIs(double factor, int ownerLoad, int successorLoad, int thirdLoad) {
		// ceil(2.2 x 45 / 3) = 33, yet 2.2 x 45 / 3 is 33.00000000000001 in doubles;
		// likewise 1.8 x (25 / 3) and 1.35 x (20 / 3): a bound computed in floating point
		// would be one too high and keep the owner.
		Snapshot<Endpoint> snapshot = bounded(factor, 1, 1, 1).snapshot();
		int[] order = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1));
		hold(snapshot, order[0], ownerLoad);
		hold(snapshot, order[1], successorLoad);
		hold(snapshot, order[2], thirdLoad);
		assertThat(snapshot.select(KEY)).isEqualTo(order[1]);
		release(order[0], 1);
		hold(snapshot, order[2], 1);
		assertThat(snapshot.select(KEY)).isEqualTo(order[0]);
	}

	static Stream<Arguments> factorsAndWeights() {
		return Stream.of("1.1", "1.2", "1.25", "1.5", "2", "3.75")
			.flatMap((factor) -> Stream.of("1,1,1", "3,1,2", "1,1").map((weights) -> Arguments.of(factor, weights)));
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "1.0", "0.5", "-1.25", "NaN", "Infinity" })
	void rejectsAFactorThatIsNeitherZeroNorAboveOne(double factor) {
		assertThatIllegalArgumentException().isThrownBy(
				() -> BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH).withHashBalanceFactor(factor))
			.withMessage("hash-balance-factor: " + factor + " (expected: 0 (off) or > 1, e.g. 1.25)");
	}

	@Test
	void keepsTheFactorAcrossRebuilds() {
		Balancer<Endpoint> balancer = bounded(1.25, 1, 1, 1);
		balancer.update(TestBalancers.endpoints(1, 1, 1, 1));
		Snapshot<Endpoint> snapshot = balancer.update(TestBalancers.endpoints(1, 1, 1));
		assertThat(snapshot.settings().hashBalanceFactor()).isEqualTo(1.25);
		int[] order = ringOrder(KEY, TestBalancers.endpoints(1, 1, 1));
		hold(snapshot, order[0], 7);
		hold(snapshot, order[1], 3);
		hold(snapshot, order[2], 4);
		assertThat(snapshot.select(KEY)).isEqualTo(order[1]);
	}

	private Balancer<Endpoint> bounded(double factor, int... weights) {
		return this.balancers.balancer(
				BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH).withHashBalanceFactor(factor),
				TestBalancers.endpoints(weights));
	}

	/**
	 * Returns the endpoints in the order a key meets them clockwise from its owner: each
	 * is the key's owner on a plain ring without the ones before it.
	 */
	private static int[] ringOrder(String key, List<Endpoint> endpoints) {
		List<Endpoint> remaining = new ArrayList<>(endpoints);
		int[] order = new int[endpoints.size()];
		for (int i = 0; i < order.length; i++) {
			Endpoint next = remaining.get(owner(key, remaining));
			order[i] = endpoints.indexOf(next);
			remaining.remove(next);
		}
		return order;
	}

	private static int owner(String key, List<Endpoint> endpoints) {
		Snapshot<Endpoint> plain = new TestBalancers()
			.balancer(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH), endpoints)
			.snapshot();
		return plain.select(key);
	}

	private static String keyOwnedBy(int index, List<Endpoint> endpoints) {
		for (int i = 0;; i++) {
			if (owner("key-" + i, endpoints) == index) {
				return "key-" + i;
			}
		}
	}

	/**
	 * Holds {@code count} more requests in flight on endpoint {@code index}, or releases
	 * {@code -count} of them.
	 */
	private void hold(Snapshot<Endpoint> snapshot, int index, int count) {
		if (count < 0) {
			release(index, -count);
			return;
		}
		for (int i = 0; i < count; i++) {
			this.held.add(snapshot.acquire(index));
		}
	}

	private void release(int index, int count) {
		for (int i = this.held.size() - 1; i >= 0 && count > 0; i--) {
			if (this.held.get(i).endpoint().address().equals(TestBalancers.endpoint(index, 1).address())) {
				this.held.remove(i).release();
				count--;
			}
		}
		assertThat(count).as("requests held on endpoint %d to release", index).isZero();
	}

	private void setLoad(Snapshot<Endpoint> snapshot, int index, int load) {
		int now = snapshot.state(index).inFlight();
		if (load > now) {
			hold(snapshot, index, load - now);
		}
		else if (load < now) {
			release(index, now - load);
		}
	}

}
