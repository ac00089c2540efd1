package dev.gatewaylb.internal.balance;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A session finds its endpoint by the stable id its cookie carries, and stays there while
 * the endpoint is a member, healthy and under its limit, draining included.
 */
class FollowTests {

	private final TestBalancers balancers = new TestBalancers();

	@Test
	void findsEveryEndpointByItsStableIdWhateverTheOrderAndAnUnknownIdNowhere() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1, 1, 1, 1);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		for (int i = 0; i < snapshot.size(); i++) {
			long id = StableHash.hash(snapshot.endpoint(i).address());
			assertThat(snapshot.id(i)).isEqualTo(id);
			assertThat(snapshot.follow(id)).isEqualTo(i);
		}
		assertThat(snapshot.follow(StableHash.hash("10.9.9.9:8080"))).isEqualTo(-1);
		// A sixth endpoint shifts some indexes: every id still finds its own endpoint.
		Snapshot<Endpoint> grown = balancer.update(TestBalancers.endpoints(1, 1, 1, 1, 1, 1));
		for (int i = 0; i < snapshot.size(); i++) {
			int index = grown.follow(snapshot.id(i));
			assertThat(grown.endpoint(index)).isEqualTo(snapshot.endpoint(i));
		}
	}

	@Test
	void aDrainingEndpointKeepsItsSessionsButAnEjectedOrUnhealthyOneDoesNot() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1, 1, 1);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		long a = snapshot.id(0);
		long b = snapshot.id(1);
		long c = snapshot.id(2);
		balancer.drain(snapshot.endpoint(0).address(), true);
		long now = this.balancers.clock.get();
		snapshot.state(1).eject(now, now + 60_000_000_000L);
		snapshot.state(2).markHealthy(false);
		Snapshot<Endpoint> after = balancer.reevaluate();
		assertThat(after.isFailOpen()).isFalse();
		assertThat(after.follow(a)).as("draining").isZero();
		assertThat(after.follow(b)).as("ejected").isEqualTo(-1);
		assertThat(after.follow(c)).as("failing its checks").isEqualTo(-1);
		assertThat(after.follow(after.id(3))).isEqualTo(3);
		// Draining while ejected: nowhere.
		after.state(0).eject(now, now + 60_000_000_000L);
		assertThat(balancer.reevaluate().follow(a)).isEqualTo(-1);
	}

	@Test
	void whileTheSetFailsOpenASessionFollowsAnEjectedEndpoint() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 1, 1);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		long now = this.balancers.clock.get();
		snapshot.state(0).eject(now, now + 60_000_000_000L);
		snapshot.state(1).eject(now, now + 60_000_000_000L);
		Snapshot<Endpoint> after = balancer.reevaluate();
		assertThat(after.isFailOpen()).isTrue();
		assertThat(after.follow(after.id(0))).isZero();
		assertThat(after.follow(after.id(1))).isEqualTo(1);
	}

	@Test
	void anEndpointAtItsConcurrencyLimitSendsTheSessionElsewhere() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.LEAST_REQUESTS, 1, 1).snapshot();
		snapshot.state(0).concurrencyLimit(1);
		InFlightGuard held = snapshot.acquire(0);
		assertThat(snapshot.follow(snapshot.id(0))).isEqualTo(-1);
		held.release();
		assertThat(snapshot.follow(snapshot.id(0))).isZero();
	}

	@Test
	void anEndpointOfWeightZeroKeepsItsSessionsLikeADrainingOne() {
		Snapshot<Endpoint> snapshot = this.balancers
			.balancer(BalancerSettings.DEFAULTS, List.of(TestBalancers.endpoint(0, 0), TestBalancers.endpoint(1, 1)))
			.snapshot();
		assertThat(snapshot.follow(snapshot.id(0))).isZero();
		for (int i = 0; i < 10; i++) {
			assertThat(snapshot.select(null)).as("new sessions").isEqualTo(1);
		}
	}

}
