package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Priority levels by zone: Envoy's shares with the overprovisioning factor, panic, spill,
 * a key that keeps its level, retries that stay in their level.
 */
class LevelsTests {

	private static final LevelSettings IN_A = new LevelSettings(true, "a", 1.4, 0.5, false);

	private final TestBalancers balancers = new TestBalancers();

	@ParameterizedTest(name = "{0} of {1} healthy, {2} of {3} healthy -> {4}, {5}")
	@CsvSource(textBlock = """
			3, 3, 3, 3, 1.0,   0.0
			1, 3, 3, 3, 0.4667, 0.5333
			2, 3, 3, 3, 0.9333, 0.0667
			0, 3, 3, 3, 0.0,   1.0
			1, 3, 1, 3, 0.5,   0.5
			1, 3, 0, 3, 1.0,   0.0
			5, 7, 1, 1, 1.0,   0.0
			0, 0, 2, 2, 0.0,   1.0
			""")
	void sharesAreEnvoysPriorityLoad(int healthy0, int endpoints0, int healthy1, int endpoints1, double share0,
			double share1) {
		double[] shares = Levels.healthShares(new int[] { endpoints0, endpoints1 }, new int[] { healthy0, healthy1 },
				1.4);
		assertThat(shares[0]).isCloseTo(share0, within(1e-4));
		assertThat(shares[1]).isCloseTo(share1, within(1e-4));
	}

	@Test
	void threeLevelsTakeWhatTheOnesBeforeLeft() {
		// P0 1/4 healthy: 35%; P1 1/2: 70%, of which 65% is left; P2 takes nothing.
		double[] shares = Levels.healthShares(new int[] { 4, 2, 5 }, new int[] { 1, 1, 5 }, 1.4);
		assertThat(shares).containsExactly(new double[] { 0.35, 0.65, 0.0 }, within(1e-9));
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Algorithm.class)
	void withEveryLocalEndpointHealthyEveryRequestStaysInTheZone(Algorithm algorithm) {
		Snapshot<Endpoint> snapshot = sixInTwoZones(algorithm);
		for (int i = 0; i < 2_000; i++) {
			int index = snapshot.select("key-" + i);
			assertThat(snapshot.endpoint(index).zone()).as("pick %d", i).isEqualTo("a");
			snapshot.acquire(index).release();
		}
		assertThat(snapshot.levels()).extracting(Snapshot.Level::priority, Snapshot.Level::share)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(0, 1.0), org.assertj.core.groups.Tuple.tuple(1, 0.0));
		assertThat(snapshot.levels().get(0).requests()).isEqualTo(2_000);
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Algorithm.class)
	void twoLocalEndpointsOutSendOneAndAHalfTimesWhatTheOneLeftCarriesAway(Algorithm algorithm) {
		Balancer<Endpoint> balancer = this.balancers
			.balancer(BalancerSettings.DEFAULTS.withAlgorithm(algorithm).withLevels(IN_A), endpoints());
		long now = this.balancers.clock.get();
		balancer.snapshot().state(0).eject(now, now + 60_000_000_000L);
		balancer.snapshot().state(1).eject(now, now + 60_000_000_000L);
		Snapshot<Endpoint> snapshot = balancer.reevaluate();
		int requests = 20_000;
		int local = 0;
		for (int i = 0; i < requests; i++) {
			int index = snapshot.select("key-" + i);
			assertThat(index).isNotIn(0, 1);
			local += "a".equals(snapshot.endpoint(index).zone()) ? 1 : 0;
			snapshot.acquire(index).release();
		}
		double expected = 1.0 / 3 * 1.4;
		double sigma = Math.sqrt(requests * expected * (1 - expected));
		// Consistent hashing draws the level by key: its local part is the keys of the
		// healthy endpoint's arcs (about a third, spread 8%) and a share of the rest.
		double spread = (algorithm == Algorithm.CONSISTENT_HASH) ? 0.05 * requests : 5 * sigma;
		assertThat((double) local).isCloseTo(requests * expected, within(spread));
		assertThat(snapshot.levels().get(0).share()).isCloseTo(expected, within(1e-9));
	}

	@Test
	void aDrainedLocalEndpointLowersTheLocalShareAsAnEjectedOneDoes() {
		Balancer<Endpoint> drained = this.balancers.balancer(BalancerSettings.DEFAULTS.withLevels(IN_A), endpoints());
		drained.drain(drained.snapshot().endpoint(0).address(), true);
		Balancer<Endpoint> ejected = this.balancers.balancer(BalancerSettings.DEFAULTS.withLevels(IN_A), endpoints());
		long now = this.balancers.clock.get();
		ejected.snapshot().state(0).eject(now, now + 60_000_000_000L);
		assertThat(drained.snapshot().levels()).isEqualTo(ejected.reevaluate().levels());
		assertThat(drained.snapshot().levels().get(0).share()).isCloseTo(2.0 / 3 * 1.4, within(1e-9));
	}

	@Test
	void belowThePanicThresholdEveryEndpointTakesTraffic() {
		Balancer<Endpoint> balancer = this.balancers.balancer(BalancerSettings.DEFAULTS.withLevels(IN_A), endpoints());
		long now = this.balancers.clock.get();
		for (int i = 0; i < 5; i++) {
			balancer.snapshot().state(i).eject(now, now + 60_000_000_000L);
		}
		Snapshot<Endpoint> snapshot = balancer.reevaluate();
		assertThat(snapshot.isPanic()).isTrue();
		assertThat(snapshot.isFailOpen()).isFalse();
		int[] picks = new int[6];
		for (int i = 0; i < 600; i++) {
			picks[snapshot.select(null)]++;
		}
		assertThat(picks).containsOnly(100);
		assertThat(snapshot.levels()).extracting(Snapshot.Level::share).containsExactly(0.5, 0.5);
		// At the threshold, not below it: no panic.
		Balancer<Endpoint> half = this.balancers.balancer(BalancerSettings.DEFAULTS.withLevels(IN_A), endpoints());
		for (int i = 0; i < 3; i++) {
			half.snapshot().state(i).eject(now, now + 60_000_000_000L);
		}
		assertThat(half.reevaluate().isPanic()).isFalse();
		// A threshold of 0 never panics.
		Balancer<Endpoint> never = this.balancers
			.balancer(BalancerSettings.DEFAULTS.withLevels(new LevelSettings(true, "a", 1.4, 0, false)), endpoints());
		for (int i = 0; i < 5; i++) {
			never.snapshot().state(i).eject(now, now + 60_000_000_000L);
		}
		Snapshot<Endpoint> neverPanics = never.reevaluate();
		assertThat(neverPanics.isPanic()).isFalse();
		for (int i = 0; i < 100; i++) {
			assertThat(neverPanics.select(null)).isEqualTo(5);
		}
	}

	@Test
	void aKeyKeepsItsEndpointWhenAnotherLocalEndpointIsEjected() {
		Balancer<Endpoint> balancer = this.balancers
			.balancer(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH).withLevels(IN_A), endpoints());
		Snapshot<Endpoint> before = balancer.snapshot();
		Map<String, Integer> owners = new HashMap<>();
		for (int i = 0; i < 1_000; i++) {
			owners.put("key-" + i, before.select("key-" + i));
		}
		assertThat(owners.values()).allSatisfy((index) -> assertThat(index).isBetween(0, 2));
		long now = this.balancers.clock.get();
		before.state(1).eject(now, now + 60_000_000_000L);
		Snapshot<Endpoint> after = balancer.reevaluate();
		int ofEjected = 0;
		int spilled = 0;
		for (Map.Entry<String, Integer> key : owners.entrySet()) {
			int index = after.select(key.getKey());
			if (key.getValue() == 1) {
				ofEjected++;
				assertThat(index).isNotEqualTo(1);
				spilled += (index >= 3) ? 1 : 0;
			}
			else {
				assertThat(index).as(key.getKey()).isEqualTo(key.getValue());
			}
		}
		// Local share 2/3 x 1.4 = 93.3%: a fifth of the ejected endpoint's keys leave
		// the zone, the others go to its neighbours on the ring.
		assertThat(ofEjected).isPositive();
		assertThat((double) spilled / ofEjected).isCloseTo(0.2, within(0.1));
	}

	@Test
	void aKeyKeepsItsEndpointWhenAnotherLocalEndpointIsDrained() {
		Balancer<Endpoint> balancer = this.balancers
			.balancer(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.CONSISTENT_HASH).withLevels(IN_A), endpoints());
		Snapshot<Endpoint> before = balancer.snapshot();
		Map<String, Integer> owners = new HashMap<>();
		for (int i = 0; i < 1_000; i++) {
			owners.put("key-" + i, before.select("key-" + i));
		}
		Snapshot<Endpoint> after = balancer.drain(before.endpoint(1).address(), true);
		owners.forEach((key, owner) -> {
			if (owner != 1) {
				assertThat(after.select(key)).as(key).isEqualTo(owner);
			}
			else {
				assertThat(after.select(key)).as(key).isNotEqualTo(1);
			}
		});
	}

	@Test
	void aRetryPrefersAnotherEndpointOfTheLevelOfTheOneItTried() {
		Snapshot<Endpoint> snapshot = sixInTwoZones(Algorithm.ROUND_ROBIN);
		String local = snapshot.endpoint(0).address();
		String remote = snapshot.endpoint(3).address();
		for (int i = 0; i < 100; i++) {
			assertThat(snapshot.endpoint(snapshot.selectAvoiding(local::equals, local)).zone()).isEqualTo("a");
			assertThat(snapshot.endpoint(snapshot.selectAvoiding(remote::equals, remote)).zone()).isEqualTo("b");
		}
		List<String> locals = List.of(local, snapshot.endpoint(1).address(), snapshot.endpoint(2).address());
		assertThat(snapshot.endpoint(snapshot.selectAvoiding(locals::contains, local)).zone()).as("then the next level")
			.isEqualTo("b");
	}

	@Test
	void aPriorityFromDiscoveryWinsOverTheZone() {
		List<Endpoint> endpoints = new ArrayList<>(endpoints());
		// The first remote endpoint is made the most preferred of all.
		endpoints.set(3, endpoints.get(3).at("b", 0));
		Snapshot<Endpoint> snapshot = this.balancers.balancer(BalancerSettings.DEFAULTS.withLevels(IN_A), endpoints)
			.snapshot();
		assertThat(snapshot.priority(3)).isZero();
		assertThat(snapshot.levels()).extracting(Snapshot.Level::endpoints).containsExactly(4, 2);
	}

	@Test
	void aBusyLevelSendsARequestToTheNextLevelWhenItsPickIsExpectedToAnswerSooner() {
		Balancer<Endpoint> balancer = this.balancers
			.balancer(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.LEAST_REQUESTS).withLevels(IN_A), endpoints());
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		// Two requests in flight on every local endpoint, none remote.
		List<InFlightGuard> held = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			held.add(snapshot.acquire(i));
			held.add(snapshot.acquire(i));
		}
		assertThat(snapshot.select(null)).as("not spilling: local").isBetween(0, 2);
		// Local: 10 ms a request in flight, so 30 ms for the next; remote: 12 ms.
		balancer.load(Map.of(0, new LevelSpill.Load(true, 10_000_000), 1, new LevelSpill.Load(false, 12_000_000)));
		assertThat(balancer.snapshot()).as("no rebuild").isSameAs(snapshot);
		assertThat(snapshot.levels().get(0).spilling()).isTrue();
		assertThat(snapshot.select(null)).as("spilling: remote").isBetween(3, 5);
		// A remote request costs 40 ms now, more than a local one.
		balancer.load(Map.of(0, new LevelSpill.Load(true, 10_000_000), 1, new LevelSpill.Load(false, 40_000_000)));
		assertThat(snapshot.select(null)).isBetween(0, 2);
		assertThat(balancer.reevaluate().levels().get(0).spilling()).as("kept by the next rebuild").isTrue();
		held.forEach(InFlightGuard::release);
	}

	@Test
	void withoutLocalityThereAreNoLevels() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(BalancerSettings.DEFAULTS, endpoints()).snapshot();
		assertThat(snapshot.levels()).isEmpty();
		assertThat(snapshot.priority(0)).isEqualTo(-1);
	}

	private Snapshot<Endpoint> sixInTwoZones(Algorithm algorithm) {
		return this.balancers.balancer(BalancerSettings.DEFAULTS.withAlgorithm(algorithm).withLevels(IN_A), endpoints())
			.snapshot();
	}

	/**
	 * Returns six endpoints: three in zone a (indexes 0 to 2), three in zone b.
	 */
	private static List<Endpoint> endpoints() {
		List<Endpoint> endpoints = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			endpoints.add(TestBalancers.endpoint(i, 1).at((i < 3) ? "a" : "b", Endpoint.NO_PRIORITY));
		}
		return endpoints;
	}

}
