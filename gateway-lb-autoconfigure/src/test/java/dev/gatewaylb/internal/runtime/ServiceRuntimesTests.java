package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.balance.InFlightGuard;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.DiscoveryPoller;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.health.LatencyOutliers;
import dev.gatewaylb.internal.hedging.core.HedgeDelay;
import dev.gatewaylb.internal.hedging.core.Hedging;
import dev.gatewaylb.internal.overload.core.Partitions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.ServiceInstance;

import static dev.gatewaylb.internal.runtime.TestRuntimes.instance;
import static org.assertj.core.api.Assertions.assertThat;

class ServiceRuntimesTests {

	private TestRuntimes fixture = new TestRuntimes(Map.of());

	@AfterEach
	void stop() {
		this.fixture.close();
	}

	@Test
	void eachLimitedServiceHoldsItsOwnLimitAndWaitersWithoutPartitions() {
		this.fixture.close();
		this.fixture = new TestRuntimes(Map.of("gateway.lb.defaults.concurrency.limit", "fixed",
				"gateway.lb.services.unlimited.concurrency.limit", "none"));
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime catalog = this.fixture.runtime("catalog");
		ServiceRuntime orders = this.fixture.runtime("orders");
		ServiceRuntime unlimited = this.fixture.runtime("unlimited");
		// Once, every service without partitions shared Partitions.NONE: the last one's
		// limit written showed as each one's, and waiters of one were woken by another.
		// Every service has partitions of its own now, limited or not.
		assertThat(catalog.feature(OverloadState.class).partitions())
			.isNotSameAs(orders.feature(OverloadState.class).partitions())
			.isNotSameAs(unlimited.feature(OverloadState.class).partitions());
		catalog.feature(OverloadState.class).partitions().serviceLimit(20);
		orders.feature(OverloadState.class).partitions().serviceLimit(7);
		assertThat(catalog.feature(OverloadState.class).partitions().serviceLimit()).isEqualTo(20);
		this.fixture.refresh(Map.of("gateway.lb.defaults.concurrency.limit", "fixed",
				"gateway.lb.defaults.concurrency.initial-limit", "30"));
		assertThat(this.fixture.runtime("catalog").feature(OverloadState.class).partitions())
			.as("carried over a refresh")
			.isSameAs(catalog.feature(OverloadState.class).partitions());
	}

	@Test
	void resolvesAServiceToOneRuntimeInAnySpelling() {
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime runtime = this.fixture.runtime("Catalog");
		assertThat(this.fixture.runtimes.find("catalog")).isSameAs(runtime);
		assertThat(this.fixture.runtimes.find("CATALOG")).isSameAs(runtime);
		assertThat(this.fixture.runtimes.all()).singleElement().isSameAs(runtime);
		assertThat(runtime.id()).isEqualTo("catalog");
	}

	@Test
	void remembersOnlyAFewSpellingsOfAnIdHoweverManyRequestsUse() {
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime runtime = this.fixture.runtime("catalog");
		for (int mask = 0; mask < 128; mask++) {
			StringBuilder spelling = new StringBuilder("catalog");
			for (int i = 0; i < spelling.length(); i++) {
				if ((mask & (1 << i)) != 0) {
					spelling.setCharAt(i, Character.toUpperCase(spelling.charAt(i)));
				}
			}
			assertThat(this.fixture.runtimes.find(spelling.toString())).as(spelling.toString()).isSameAs(runtime);
		}
		assertThat(this.fixture.runtimes.keys()).isLessThanOrEqualTo(1 + 8);
	}

	@Test
	void neitherRebuildsNorLosesTheRoundRobinSequenceWhenDiscoveryReshufflesItsList() {
		List<ServiceInstance> listed = new ArrayList<>(List.of(instance("a", 5), instance("b", 1), instance("c", 2)));
		this.fixture.instances.addAll(listed);
		ServiceRuntime runtime = this.fixture.runtime("svc");
		Snapshot<Member> built = runtime.snapshot();
		StringBuilder sequence = new StringBuilder(picks(runtime, 8));
		Random random = new Random(11);
		for (int round = 0; round < 10; round++) {
			Collections.shuffle(listed, random);
			this.fixture.instances.clear();
			this.fixture.instances.addAll(listed);
			this.fixture.poll();
			assertThat(runtime.snapshot()).as("round %d, order %s", round, listed).isSameAs(built);
			sequence.append(picks(runtime, 8));
		}
		assertThat(sequence).hasToString("acaabaca".repeat(11));
	}

	@Test
	void rebuildsWhenAWeightChangesAndKeepsTheStateOfEveryEndpoint() {
		this.fixture.instances.addAll(List.of(instance("a", 1), instance("b", 1)));
		ServiceRuntime runtime = this.fixture.runtime("svc");
		picks(runtime, 4);
		Snapshot<Member> before = runtime.snapshot();
		this.fixture.instances.set(1, instance("b", 3));
		this.fixture.poll();
		Snapshot<Member> after = runtime.snapshot();
		assertThat(after).isNotSameAs(before);
		assertThat(after.endpoint(1).weight()).isEqualTo(3);
		assertThat(after.state(0)).isSameAs(before.state(0));
		assertThat(after.state(0).picks()).isEqualTo(2);
	}

	@Test
	void believesAnEmptyListOnlyWhenALaterPollSaysSoAgain() {
		this.fixture.instances.addAll(List.of(instance("a", 1), instance("b", 1)));
		ServiceRuntime runtime = this.fixture.runtime("svc");
		this.fixture.instances.clear();
		this.fixture.poll();
		assertThat(runtime.snapshot().size()).as("one empty read is not believed").isEqualTo(2);
		this.fixture.clock.addAndGet(DiscoveryPoller.POLL_INTERVAL.toNanos());
		this.fixture.poll();
		assertThat(runtime.snapshot().size()).isZero();
	}

	@Test
	void keepsTheRuntimeWhenARefreshLeavesTheServiceAlone() {
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime runtime = this.fixture.runtime("svc");
		this.fixture.refresh(Map.of("gateway.lb.services.other.algorithm", "least-requests"));
		assertThat(this.fixture.runtimes.find("svc")).isSameAs(runtime);
	}

	@Test
	void carriesTheBalancerPoolsAndBudgetOverASettingsChangeThatDoesNotTouchThem() {
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime before = this.fixture.runtime("svc");
		this.fixture.refresh(Map.of("gateway.lb.services.svc.algorithm", "least-requests"));
		ServiceRuntime after = this.fixture.runtimes.find("svc");
		assertThat(after).isNotSameAs(before);
		assertThat(after.generation()).isEqualTo(before.generation() + 1);
		assertThat(after.balancer()).isSameAs(before.balancer());
		assertThat(after.snapshot().settings().algorithm().name()).isEqualTo("LEAST_REQUESTS");
		assertThat(after.upstream()).isSameAs(before.upstream());
		assertThat(after.budget()).isSameAs(before.budget());
		assertThat(after.counters()).isSameAs(before.counters());
	}

	@Test
	void rebuildsOnlyWhatASettingsChangeTouches() {
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime before = this.fixture.runtime("svc");
		this.fixture.refresh(Map.of("gateway.lb.services.svc.pool.max-connections", "8",
				"gateway.lb.services.svc.retry.budget-percent", "50"));
		ServiceRuntime after = this.fixture.runtimes.find("svc");
		assertThat(after.upstream()).isNotSameAs(before.upstream());
		assertThat(after.upstream().settings().maxConnections()).isEqualTo(8);
		assertThat(after.budget()).isNotSameAs(before.budget());
		assertThat(after.balancer()).isSameAs(before.balancer());
		assertThat(after.snapshot()).isSameAs(before.snapshot());
	}

	@Test
	void startsHedgingOnARefreshAndKeepsItsWindowUntilTheHedgeSettingsChange() {
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime off = this.fixture.runtime("svc");
		assertThat(off.feature(HedgeState.class).hedging()).isNull();
		this.fixture.refresh(Map.of("gateway.lb.services.svc.hedge.max-extra-load", "0.05"));
		ServiceRuntime on = this.fixture.runtimes.find("svc");
		assertThat(on.feature(HedgeState.class).hedging()).isNotNull();
		assertThat(on.feature(HedgeState.class).hedging().delay().maxExtraLoad()).isEqualTo(0.05);
		this.fixture.refresh(Map.of("gateway.lb.services.svc.hedge.max-extra-load", "0.05",
				"gateway.lb.services.svc.algorithm", "least-requests"));
		ServiceRuntime kept = this.fixture.runtimes.find("svc");
		assertThat(kept).isNotSameAs(on);
		assertThat(kept.feature(HedgeState.class).hedging()).as("same hedge settings: the same window and budget")
			.isSameAs(on.feature(HedgeState.class).hedging());
		this.fixture
			.refresh(Map.of("gateway.lb.services.svc.hedge.max-extra-load", "0.05", "gateway.lb.services.svc.algorithm",
					"least-requests", "gateway.lb.services.svc.hedge.min-delay", "20ms"));
		assertThat(this.fixture.runtimes.find("svc").feature(HedgeState.class).hedging())
			.isNotSameAs(on.feature(HedgeState.class).hedging());
		this.fixture.refresh(Map.of());
		assertThat(this.fixture.runtimes.find("svc").feature(HedgeState.class).hedging()).as("hedging off again")
			.isNull();
	}

	@Test
	void keepsThePoolsWhenOnlyTheRequestBodyIdleTimeoutChanges() {
		this.fixture.instances.add(instance("a", 1));
		ServiceRuntime before = this.fixture.runtime("svc");
		this.fixture.refresh(Map.of("gateway.lb.services.svc.timeouts.request-body-idle", "5s"));
		ServiceRuntime after = this.fixture.runtimes.find("svc");
		assertThat(after.settings().upstream().requestBodyIdleTimeout()).hasSeconds(5);
		assertThat(after.upstream()).isSameAs(before.upstream());
	}

	@Test
	void tracksConfiguredServicesAndSplitTargetsFromTheStart() {
		this.fixture.close();
		this.fixture = new TestRuntimes(Map.of("gateway.lb.services.catalog.algorithm", "least-requests",
				"gateway.lb.splits.shop.targets.shop-blue", "1", "gateway.lb.splits.shop.targets.shop-green", "1"));
		this.fixture.instances.add(instance("a", 1));
		// The runtimes may have polled discovery before the instance was listed.
		this.fixture.poll();
		assertThat(this.fixture.runtimes.all()).extracting(ServiceRuntime::id)
			.containsExactly("catalog", "shop-blue", "shop-green");
		assertThat(this.fixture.runtimes.find("catalog").snapshot().size()).isEqualTo(1);
	}

	@Test
	void picksForOtherCallersUniformlyWithALoadAwareAlgorithm() {
		this.fixture.close();
		this.fixture = new TestRuntimes(Map.of("gateway.lb.defaults.algorithm", "least-requests"));
		this.fixture.instances.addAll(List.of(instance("a", 1), instance("b", 2), instance("c", 3)));
		this.fixture.runtime("svc");
		ServiceBalancer balancer = new ServiceBalancer("svc", this.fixture.runtimes);
		Map<String, Integer> counts = new HashMap<>();
		int picks = 30_000;
		for (int i = 0; i < picks; i++) {
			String id = balancer.choose(null).block().getServer().getInstanceId();
			counts.merge(id, 1, Integer::sum);
		}
		// Binomial spread of one endpoint's count: sqrt(n p (1 - p)); 4 of them.
		double p = 1.0 / 3;
		double bound = 4 * Math.sqrt(picks * p * (1 - p));
		assertThat(counts.values()).hasSize(3)
			.allSatisfy((count) -> assertThat((double) count).isBetween(picks * p - bound, picks * p + bound));
		assertThat(this.fixture.runtimes.snapshot("svc").state(0).inFlight()).isZero();
	}

	@Test
	void picksForOtherCallersInRoundRobinOrder() {
		this.fixture.instances.addAll(List.of(instance("a", 1), instance("b", 2), instance("c", 3)));
		this.fixture.runtime("svc");
		ServiceBalancer balancer = new ServiceBalancer("svc", this.fixture.runtimes);
		StringBuilder sequence = new StringBuilder();
		for (int i = 0; i < 6; i++) {
			sequence.append(balancer.choose(null).block().getServer().getInstanceId());
		}
		// nginx over weights 1, 2, 3; at the third step a and c tie at 3 and a wins.
		assertThat(sequence).hasToString("cbacbc");
	}

	@Test
	void answersAnIdNothingNamesWithNothingAndTracksNothing() {
		this.fixture.instances.add(instance("a", 1));
		for (int i = 0; i < 100; i++) {
			assertThat(this.fixture.runtimes.whenReady("ghost-" + i).blockOptional()).isEmpty();
		}
		this.fixture.advance(Duration.ofSeconds(2));
		assertThat(this.fixture.runtimes.all()).isEmpty();
		assertThat(this.fixture.runtimes.find("ghost-1")).isNull();
		assertThat(this.fixture.runtimes.unknownNamed()).isEqualTo(100);
		assertThat(new ServiceBalancer("ghost-2", this.fixture.runtimes).choose(null).block().hasServer()).isFalse();
	}

	@Test
	void tracksAnIdOnlyDiscoveryListsOnceItIsListedAndOneARouteNames() {
		this.fixture.instances.add(instance("a", 1));
		assertThat(this.fixture.runtimes.whenReady("late").blockOptional()).as("not listed yet").isEmpty();
		this.fixture.listed.add("Late");
		this.fixture.advance(Duration.ofSeconds(1));
		CompletableFuture<ServiceRuntime> late = this.fixture.runtimes.whenReady("LATE").toFuture();
		this.fixture.control.runDue();
		assertThat(late.getNow(null)).isNotNull().extracting(ServiceRuntime::id).isEqualTo("late");
		this.fixture.runtimes.routed(List.of("routed"));
		this.fixture.control.runDue();
		assertThat(this.fixture.runtimes.find("routed")).isNotNull();
	}

	@Test
	void removesAServiceUnknownForThirtySecondsAndKeepsOneThatCameBackSooner() {
		this.fixture.instances.add(instance("a", 1));
		List<String> removed = new ArrayList<>();
		this.fixture.runtimes.addListener(new RuntimeListener() {

			@Override
			public void runtimeRemoved(ServiceRuntime runtime) {
				removed.add(runtime.id());
			}

		});
		ServiceRuntime flapping = this.fixture.runtime("flapping");
		this.fixture.runtime("leaving");
		this.fixture.runtimes.routed(List.of("routed"));
		this.fixture.listed.clear();
		secondBySecond(20);
		this.fixture.listed.add("flapping");
		secondBySecond(20);
		assertThat(removed).containsExactly("leaving");
		assertThat(this.fixture.runtimes.find("leaving")).isNull();
		assertThat(this.fixture.runtimes.find("flapping")).as("its state kept").isSameAs(flapping);
		assertThat(this.fixture.runtimes.find("routed")).as("a route names it").isNotNull();
		assertThat(this.fixture.runtimes.whenReady("leaving").blockOptional()).as("not tracked again").isEmpty();
		this.fixture.runtimes.routed(List.of());
		secondBySecond(29);
		assertThat(removed).containsExactly("leaving");
		secondBySecond(2);
		assertThat(removed).containsExactly("leaving", "routed");
	}

	/**
	 * Moves the clock one second at a time, so that every run of the one-second jobs
	 * happens.
	 */
	private void secondBySecond(int seconds) {
		for (int i = 0; i < seconds; i++) {
			this.fixture.advance(Duration.ofSeconds(1));
		}
	}

	@Test
	void runsItsWorkOnNamedJobsOfTheirOwnEachWithItsInterval() {
		assertThat(this.fixture.control.jobs()).containsExactly("discovery-poll every 1000ms",
				"known-services every 1000ms", "latency-ejection every 1000ms", "success-rate-ejection every 1000ms",
				"hedge-window-roll every 1000ms", "concurrency-limits every 100ms", "affinity-window every 5000ms",
				"locality-spill every 100ms", "load-report-weights every 1000ms", "load-report-probe every 1000ms",
				"websocket-drain every 250ms");
	}

	@Test
	void ejectsAnEndpointSlowerThanTheFactorTimesTheMedianOnTheLatencyJobAndStopsPickingIt() {
		this.fixture.close();
		this.fixture = new TestRuntimes(Map.of("gateway.lb.defaults.health.passive.latency-factor", "3"));
		this.fixture.instances.addAll(List.of(instance("a", 1), instance("b", 1), instance("c", 1)));
		ServiceRuntime runtime = this.fixture.runtime("svc");
		Snapshot<Member> snapshot = runtime.snapshot();
		long now = this.fixture.clock.get();
		long[] millis = { 20, 21, 70 };
		for (int i = 0; i < millis.length; i++) {
			for (int n = 0; n < LatencyOutliers.MIN_SAMPLES; n++) {
				InFlightGuard guard = snapshot.acquire(i);
				guard.start(now);
				guard.recordLatency(now + millis[i] * 1_000_000);
				guard.release();
			}
		}
		this.fixture.advance(LatencyEjection.INTERVAL.minusNanos(1));
		assertThat(picks(runtime, 6)).as("not evaluated yet").contains("c");
		this.fixture.advance(Duration.ofNanos(1));
		assertThat(snapshot.state(2).isEjected(this.fixture.clock.get())).isTrue();
		assertThat(runtime.snapshot()).as("rebuilt on the control thread").isNotSameAs(snapshot);
		assertThat(picks(runtime, 6)).isEqualTo("ababab");
	}

	@Test
	void movesTheHedgeWindowOnOnItsOwnJobEverySecond() {
		this.fixture.close();
		this.fixture = new TestRuntimes(Map.of("gateway.lb.defaults.hedge.max-extra-load", "0.1"));
		this.fixture.instances.add(instance("a", 1));
		Hedging hedging = this.fixture.runtime("svc").feature(HedgeState.class).hedging();
		for (int i = 0; i < HedgeDelay.minSamples(0.1); i++) {
			hedging.record((i + 1) * 1_000_000L);
		}
		this.fixture.poll();
		assertThat(hedging.delayNanos()).as("a discovery poll does not move it").isEqualTo(HedgeDelay.UNKNOWN);
		this.fixture.advance(HedgeState.WINDOW_STEP.minusNanos(1));
		assertThat(hedging.delayNanos()).isEqualTo(HedgeDelay.UNKNOWN);
		this.fixture.advance(Duration.ofNanos(1));
		// p90 of 1..100 ms, to the histogram's two significant digits.
		assertThat(hedging.delayNanos()).isBetween(90_000_000L, 91_000_000L);
	}

	private static String picks(ServiceRuntime runtime, int count) {
		StringBuilder letters = new StringBuilder();
		Snapshot<Member> snapshot = runtime.snapshot();
		for (int i = 0; i < count; i++) {
			int index = snapshot.select(null);
			snapshot.acquire(index).release();
			letters.append(snapshot.value(index).instance().getInstanceId());
		}
		return letters.toString();
	}

}
