package dev.gatewaylb.internal.websocket;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.ServiceView;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The drain's grace for WebSocket sessions, on a clock moved by hand: a drained
 * endpoint's sessions are closed once it has drained for the grace and not before, an
 * endpoint undrained in time keeps them, one that left the service counts as drained, and
 * a grace of 0 closes nothing.
 */
class WebSocketStateTests {

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	private final AtomicLong clock = new AtomicLong(1_000 * SECOND);

	private final Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS, Function.identity(),
			this.clock::get, java.util.concurrent.ThreadLocalRandom::current);

	private final Service service = new Service(this.balancer, this.clock);

	WebSocketStateTests() {
		this.balancer.update(List.of(Endpoint.of("10.0.0.1", 80, 1), Endpoint.of("10.0.0.2", 80, 1)));
	}

	@Test
	void closesADrainedEndpointsSessionsOnceItHasDrainedForTheGraceAndNoOtherSessions() {
		WebSocketState state = state(Duration.ofSeconds(5));
		Session drained = open(state, "10.0.0.1:80");
		Session serving = open(state, "10.0.0.2:80");
		state.closeDrained(this.service);
		this.balancer.drain("10.0.0.1:80", true);
		state.closeDrained(this.service);
		advance(4);
		state.closeDrained(this.service);
		assertThat(drained.goneAway).as("within the grace").isZero();
		advance(1);
		state.closeDrained(this.service);
		assertThat(drained.goneAway).as("the grace ran out").isEqualTo(1);
		assertThat(serving.goneAway).isZero();
	}

	@Test
	void anEndpointUndrainedWithinTheGraceKeepsItsSessionsAndItsNextDrainCountsAfresh() {
		WebSocketState state = state(Duration.ofSeconds(5));
		Session session = open(state, "10.0.0.1:80");
		this.balancer.drain("10.0.0.1:80", true);
		state.closeDrained(this.service);
		advance(3);
		this.balancer.drain("10.0.0.1:80", false);
		state.closeDrained(this.service);
		advance(3);
		this.balancer.drain("10.0.0.1:80", true);
		state.closeDrained(this.service);
		advance(4);
		state.closeDrained(this.service);
		assertThat(session.goneAway).isZero();
		advance(1);
		state.closeDrained(this.service);
		assertThat(session.goneAway).isEqualTo(1);
	}

	@Test
	void anEndpointThatLeftTheServiceCountsAsDrained() {
		WebSocketState state = state(Duration.ofSeconds(2));
		Session session = open(state, "10.0.0.1:80");
		this.balancer.update(List.of(Endpoint.of("10.0.0.2", 80, 1)));
		state.closeDrained(this.service);
		advance(2);
		state.closeDrained(this.service);
		assertThat(session.goneAway).isEqualTo(1);
	}

	@Test
	void aGraceOfZeroLeavesEverySessionOpen() {
		WebSocketState state = state(Duration.ZERO);
		Session session = open(state, "10.0.0.1:80");
		this.balancer.drain("10.0.0.1:80", true);
		for (int i = 0; i < 100; i++) {
			state.closeDrained(this.service);
			advance(60);
		}
		assertThat(session.goneAway).isZero();
	}

	@Test
	void aClosedSessionIsNoLongerLookedAt() {
		WebSocketState state = state(Duration.ofSeconds(1));
		Session session = open(state, "10.0.0.1:80");
		state.closed(session);
		assertThat(state.open()).isZero();
		this.balancer.drain("10.0.0.1:80", true);
		state.closeDrained(this.service);
		advance(1);
		state.closeDrained(this.service);
		assertThat(session.goneAway).isZero();
	}

	@Test
	void aRefreshThatChangesTheGraceKeepsTheOpenSessions() {
		WebSocketState state = state(Duration.ZERO);
		Session session = open(state, "10.0.0.1:80");
		WebSocketState next = WebSocketState.FEATURE.next(state, new DrainSettings(SECOND), context());
		assertThat(next).isNotSameAs(state);
		assertThat(next.open()).isEqualTo(1);
		assertThat(WebSocketState.FEATURE.next(next, new DrainSettings(SECOND), context())).isSameAs(next);
		this.balancer.drain("10.0.0.1:80", true);
		next.closeDrained(this.service);
		advance(1);
		next.closeDrained(this.service);
		assertThat(session.goneAway).isEqualTo(1);
	}

	private WebSocketState state(Duration grace) {
		return WebSocketState.FEATURE.next(null, new DrainSettings(grace.toNanos()), context());
	}

	private Feature.Context context() {
		return new Feature.Context("chat", this.clock::get, () -> 1_700_000_000_000L);
	}

	private static Session open(WebSocketState state, String endpoint) {
		Session session = new Session(endpoint);
		state.opened(session);
		return session;
	}

	private void advance(int seconds) {
		this.clock.addAndGet(seconds * SECOND);
	}

	private static final class Session implements WebSocketState.Session {

		private final String endpoint;

		int goneAway;

		Session(String endpoint) {
			this.endpoint = endpoint;
		}

		@Override
		public String endpoint() {
			return this.endpoint;
		}

		@Override
		public void goAway() {
			this.goneAway++;
		}

	}

	private record Service(Balancer<Endpoint> balancer, AtomicLong clock) implements ServiceView {

		@Override
		public String id() {
			return "chat";
		}

		@Override
		public Snapshot<?> snapshot() {
			return this.balancer.snapshot();
		}

		@Override
		public long nanoTime() {
			return this.clock.get();
		}

	}

}
