package dev.gatewaylb.internal.balance;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static dev.gatewaylb.internal.balance.TestBalancers.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class BalancerTests {

	private final TestBalancers balancers = new TestBalancers();

	@Test
	void carriesInFlightCountsByAddressAndReleasesIntoTheSnapshotThePickCameFrom() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.LEAST_REQUESTS, 1, 1, 1);
		Snapshot<Endpoint> old = balancer.snapshot();
		InFlightGuard onB = old.acquire(1);
		InFlightGuard onC = old.acquire(2);
		Snapshot<Endpoint> next = balancer.update(List.of(endpoint(3, 1), endpoint(1, 1), endpoint(0, 1)));
		assertThat(next.state(1).inFlight()).isEqualTo(1);
		assertThat(next.state(1)).isSameAs(old.state(1));
		onB.release();
		onC.release();
		assertThat(next.state(1).inFlight()).isZero();
		assertThat(next.state(0).inFlight()).isZero();
		assertThat(next.state(2).inFlight()).isZero();
	}

	@Test
	void listsEndpointsInCanonicalOrderWhateverOrderTheyComeIn() {
		Balancer<Endpoint> balancer = this.balancers.balancer(BalancerSettings.DEFAULTS,
				List.of(endpoint(2, 2), endpoint(0, 5), endpoint(1, 1)));
		assertThat(balancer.snapshot().endpoints()).containsExactly(endpoint(0, 5), endpoint(1, 1), endpoint(2, 2));
		StringBuilder sequence = new StringBuilder(TestBalancers.picks(balancer.snapshot(), 4));
		Snapshot<Endpoint> reshuffled = balancer.update(List.of(endpoint(1, 1), endpoint(2, 2), endpoint(0, 5)));
		assertThat(reshuffled.endpoints()).containsExactly(endpoint(0, 5), endpoint(1, 1), endpoint(2, 2));
		sequence.append(TestBalancers.picks(reshuffled, 12));
		// nginx over 5, 1, 2 in address order, uninterrupted by the reshuffled update.
		assertThat(sequence).hasToString("acaabaca".repeat(2));
	}

	@Test
	void startsNewAndReturningAddressesFresh() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1);
		InFlightGuard held = balancer.snapshot().acquire(1);
		balancer.update(List.of(endpoint(0, 1)));
		Snapshot<Endpoint> back = balancer.update(List.of(endpoint(0, 1), endpoint(1, 1)));
		assertThat(back.state(1).inFlight()).isZero();
		assertThat(back.state(1).picks()).isZero();
		held.release();
		assertThat(back.state(1).inFlight()).isZero();
	}

	@Test
	void keepsTheFirstOfDuplicateAddresses() {
		Balancer<Endpoint> balancer = this.balancers.balancer(BalancerSettings.DEFAULTS,
				List.of(endpoint(0, 3), endpoint(1, 1), endpoint(0, 7)));
		assertThat(balancer.snapshot().endpoints()).containsExactly(endpoint(0, 3), endpoint(1, 1));
	}

	@Test
	void switchesAlgorithmKeepingState() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1);
		InFlightGuard guard = balancer.snapshot().acquire(0);
		Snapshot<Endpoint> next = balancer.update(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.LEAST_REQUESTS));
		assertThat(next.settings().algorithm()).isEqualTo(Algorithm.LEAST_REQUESTS);
		assertThat(next.generation()).isEqualTo(2);
		assertThat(next.select(null)).isEqualTo(1);
		guard.release();
		assertThat(next.state(0).inFlight()).isZero();
	}

	@Test
	void releasesAGuardExactlyOnceUnderRacingReleases() throws Exception {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1).snapshot();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			for (int round = 0; round < 2_000; round++) {
				InFlightGuard guard = snapshot.acquire(0);
				CountDownLatch start = new CountDownLatch(1);
				AtomicInteger wins = new AtomicInteger();
				List<Future<Object>> racers = java.util.stream.IntStream.range(0, 4).mapToObj((i) -> pool.submit(() -> {
					start.await();
					if (guard.release()) {
						wins.incrementAndGet();
					}
					return null;
				})).toList();
				start.countDown();
				for (Future<Object> racer : racers) {
					racer.get(10, TimeUnit.SECONDS);
				}
				assertThat(wins).hasValue(1);
				assertThat(guard.isReleased()).isTrue();
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(snapshot.state(0).inFlight()).isZero();
		assertThat(snapshot.state(0).picks()).isEqualTo(2_000);
	}

	@Test
	void drainsAnAddressWithoutDroppingItsStateAcrossRebuilds() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 5, 1, 2);
		InFlightGuard held = balancer.snapshot().acquire(0);
		Snapshot<Endpoint> drained = balancer.drain(endpoint(0, 5).address(), true);
		assertThat(drained.isDraining(0)).isTrue();
		assertThat(drained.effectiveWeight(0)).isZero();
		assertThat(drained.state(0).inFlight()).isEqualTo(1);
		assertThat(TestBalancers.picks(drained, 30)).doesNotContain("a").contains("b", "c");
		Snapshot<Endpoint> rebuilt = balancer.update(TestBalancers.endpoints(5, 1, 2, 1));
		assertThat(rebuilt.isDraining(0)).isTrue();
		held.release();
		assertThat(rebuilt.state(0).inFlight()).isZero();
		Snapshot<Endpoint> back = balancer.drain(endpoint(0, 5).address(), false);
		assertThat(TestBalancers.picks(back, 9).chars().filter((c) -> c == 'a').count()).isEqualTo(5);
	}

	@Test
	void forgetsTheDrainOfAnAddressThatLeavesAndAnswersNullForAnUnknownOne() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.LEAST_REQUESTS, 1, 1);
		balancer.drain(endpoint(1, 1).address(), true);
		balancer.update(List.of(endpoint(0, 1)));
		assertThat(balancer.update(TestBalancers.endpoints(1, 1)).isDraining(1)).isFalse();
		assertThat(balancer.drain("nowhere:1", true)).isNull();
	}

	@Test
	void picksNothingWhenEveryEndpointDrains() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.CONSISTENT_HASH, 1, 1);
		balancer.drain(endpoint(0, 1).address(), true);
		Snapshot<Endpoint> last = balancer.drain(endpoint(1, 1).address(), true);
		assertThat(last.select("key")).isEqualTo(-1);
		assertThat(last.select(null)).isEqualTo(-1);
		assertThat(last.selectUniformly()).isEqualTo(-1);
	}

	@Test
	void rejectsANegativeWeightNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> Endpoint.of("h", 1, -3))
			.withMessage("weight: -3 (expected: >= 0)");
	}

	@Test
	void bracketsIpv6Addresses() {
		assertThat(Endpoint.of("::1", 80, 1).address()).isEqualTo("[::1]:80");
		assertThat(Endpoint.of("[::1]", 80, 1).address()).isEqualTo("[::1]:80");
		assertThat(Endpoint.of("example.org", 443, 1).address()).isEqualTo("example.org:443");
	}

}
