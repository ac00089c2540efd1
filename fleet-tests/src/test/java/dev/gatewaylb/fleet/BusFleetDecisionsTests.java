package dev.gatewaylb.fleet;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.bus.BusFleetDecisions;
import dev.gatewaylb.bus.EndpointDrainEvent;
import dev.gatewaylb.bus.RolloutVerdictEvent;
import dev.gatewaylb.internal.control.ScheduledControlThread;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.internal.autoconfigure.Features;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.settings.FleetSettings;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.upstream.Upstreams;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.internal.rollout.RolloutPlan;
import dev.gatewaylb.rollout.RolloutAction;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.cloud.bus.PathServiceMatcher;
import org.springframework.cloud.bus.event.PathDestinationFactory;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.util.AntPathMatcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Publishing a replica's decisions never waits for the bus: a broker that blocks the
 * binder's send stalls neither the control thread nor an operator's drain; decisions
 * leave in order, and beyond the queue's capacity they are dropped and counted.
 */
class BusFleetDecisionsTests {

	private final CountDownLatch brokerDown = new CountDownLatch(1);

	private final List<Object> published = new CopyOnWriteArrayList<>();

	private final BusFleetDecisions decisions = new BusFleetDecisions((event) -> {
		try {
			// A binder whose broker does not answer: the send blocks.
			this.brokerDown.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.published.add(event);
	}, new PathServiceMatcher(new AntPathMatcher(":"), "gateway:1"), new PathDestinationFactory(),
			new FleetSettings(null, null, true, true, java.util.List.of()), "gateway", System::currentTimeMillis, null,
			null);

	@AfterEach
	void close() {
		this.brokerDown.countDown();
		this.decisions.close();
	}

	@Test
	void aBlockedBusStallsNoCallerAndDropsWhatTheQueueCannotHold() {
		long start = System.nanoTime();
		int sent = BusFleetDecisions.QUEUE_CAPACITY + 50;
		for (int i = 0; i < sent; i++) {
			this.decisions.drain("svc", "10.0.0.1:" + (i + 1), true, false);
		}
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the callers' time")
			.isLessThan(Duration.ofSeconds(5));
		// One in the sender's hands, a queue full, the rest dropped.
		assertThat(this.decisions.droppedDecisions()).isBetween(49L, 50L);
		this.brokerDown.countDown();
		long kept = sent - this.decisions.droppedDecisions();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.published.size() == kept);
		List<String> endpoints = this.published.stream()
			.map((event) -> ((EndpointDrainEvent) event).getEndpoint())
			.toList();
		assertThat(endpoints.get(0)).isEqualTo("10.0.0.1:1");
		assertThat(endpoints).as("in the order decided")
			.isSortedAccordingTo(
					(a, b) -> Integer.compare(Integer.parseInt(a.substring(9)), Integer.parseInt(b.substring(9))));
	}

	@Test
	void aBusIdTheFleetsDestinationDoesNotReachFailsAtStartNamingIt() {
		assertThatIllegalStateException().isThrownBy(() -> new BusFleetDecisions((event) -> {
		}, new PathServiceMatcher(new AntPathMatcher(":"), "replica-1"), new PathDestinationFactory(),
				new FleetSettings(null, null, true, true, java.util.List.of()), "gateway", System::currentTimeMillis,
				null, null))
			.withMessageStartingWith(
					"spring.cloud.bus.id 'replica-1' is not reached by the fleet's destination 'gateway:**'");
	}

	@Test
	void aReplicaThatFollowsNoRolloutsNeitherAsksItsPeersNorActsOnTheirDecisions() {
		try (ScheduledControlThread control = new ScheduledControlThread()) {
			SplitRollouts rollouts = new SplitRollouts(control, System::currentTimeMillis, () -> FleetDecisions.NONE);
			RolloutPlan plan = new RolloutPlan("shop-canary", new int[] { 50, 100 }, Duration.ofHours(1).toNanos(), 10,
					0.01, 1.5);
			rollouts.plans(Map.of("shop", plan));
			BusFleetDecisions alone = new BusFleetDecisions((event) -> {
			}, new PathServiceMatcher(new AntPathMatcher(":"), "gateway:1"), new PathDestinationFactory(),
					new FleetSettings(null, null, true, false, java.util.List.of()), "gateway",
					System::currentTimeMillis, rollouts, null);
			try {
				assertThat(alone.asksPeersOnStart()).isFalse();
				RolloutVerdictEvent rollBack = new RolloutVerdictEvent();
				rollBack.setFleet("gateway");
				rollBack.setVersion(System.currentTimeMillis() << 16);
				rollBack.setSplit("shop");
				rollBack.setPlan(plan.fingerprint());
				rollBack.setAction("roll-back");
				rollBack.setByOperator(true);
				alone.onRolloutVerdict(BusEvents.envelope(rollBack, "gateway:2", "gateway:**"));
				// The control thread runs in order: what was queued before this has run.
				Rollout.State state = control.call(Duration.ofSeconds(10),
						() -> rollouts.track("shop").status().state());
				assertThat(state).as("an operator's roll-back from another replica, not followed")
					.isEqualTo(Rollout.State.PROGRESSING);
				assertThat(alone.rejectedEvents("invalid")).as("the event itself was valid").isZero();
			}
			finally {
				alone.close();
			}
		}
	}

	@Test
	void aReplicaThatFollowsNoDrainsKeepsItsEndpointsWhereOneThatFollowsDrainsThem() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.addFirst(new MapPropertySource("test", Map.of("gateway.lb.services.shop.algorithm", "round-robin")));
		try (ScheduledControlThread control = new ScheduledControlThread()) {
			ServiceRuntimes runtimes = new ServiceRuntimes(new LiveSettings(GatewayLbSettings.bind(environment)),
					new InstanceSource() {

						@Override
						public boolean balancesHere(String serviceId) {
							return true;
						}

						@Override
						public Mono<List<ServiceInstance>> instances(String serviceId) {
							return Mono.just(List.of(new DefaultServiceInstance("a", "shop", "10.0.0.1", 8080, false),
									new DefaultServiceInstance("b", "shop", "10.0.0.2", 8080, false)));
						}

					}, new Upstreams(HttpClient::create, Upstreams.Tls.JDK, control), control,
					ThreadLocalRandom::current, Features.all());
			runtimes.start();
			runtimes.whenReady("shop").block(Duration.ofSeconds(10));
			EndpointDrainEvent drain = new EndpointDrainEvent();
			drain.setFleet("gateway");
			drain.setVersion(System.currentTimeMillis() << 16);
			drain.setService("shop");
			drain.setEndpoint("10.0.0.1:8080");
			drain.setDrain(true);
			BusFleetDecisions ignoring = replica(new FleetSettings(null, null, false, true, java.util.List.of()),
					runtimes);
			BusFleetDecisions following = replica(new FleetSettings(null, null, true, true, java.util.List.of()),
					runtimes);
			try {
				ignoring.onEndpointDrain(BusEvents.envelope(drain, "gateway:2", "gateway:**"));
				assertThat(runtimes.drained()).as("follow-drains false").isEmpty();
				following.onEndpointDrain(BusEvents.envelope(drain, "gateway:2", "gateway:**"));
				assertThat(runtimes.drained()).as("follow-drains true")
					.isEqualTo(Map.of("shop", List.of("10.0.0.1:8080")));
			}
			finally {
				ignoring.close();
				following.close();
				runtimes.stop();
			}
		}
	}

	private static BusFleetDecisions replica(FleetSettings channel, ServiceRuntimes runtimes) {
		return new BusFleetDecisions((event) -> {
		}, new PathServiceMatcher(new AntPathMatcher(":"), "gateway:1"), new PathDestinationFactory(), channel,
				"gateway", System::currentTimeMillis, null, runtimes);
	}

	@Test
	void aRolloutDecisionLeavesOnTheSendersThread() {
		this.brokerDown.countDown();
		this.decisions.rollout("shop", "plan", RolloutAction.PROMOTE, "promoted", false);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.published.size() == 1);
		assertThat(this.published.get(0)).isInstanceOf(RolloutVerdictEvent.class);
		assertThat(this.decisions.droppedDecisions()).isZero();
	}

}
