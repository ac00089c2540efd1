package dev.gatewaylb.internal.runtime;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.control.ManualControlThread;
import dev.gatewaylb.internal.autoconfigure.Features;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.ServiceSettings;
import dev.gatewaylb.internal.upstream.Upstreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.netty.http.client.HttpClient;

import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runtime factory as a function of the runtime in force and new settings, without a
 * thread: what each settings change rebuilds, and what it carries over.
 */
class RuntimeFactoryTests {

	private final AtomicLong clock = new AtomicLong(1_000_000_000L);

	private final ManualControlThread control = new ManualControlThread(this.clock);

	private final RuntimeFactory factory = new RuntimeFactory(
			new Upstreams(HttpClient::create, Upstreams.Tls.JDK, this.control), this.control.requestClock(),
			() -> new SplittableRandom(7), Runnable::run, Features.all());

	private final List<ServiceRuntime> built = new java.util.ArrayList<>();

	@AfterEach
	void closePools() {
		this.built.stream()
			.map(ServiceRuntime::upstreamOrNull)
			.distinct()
			.forEach((upstream) -> upstream.close().block());
	}

	@Test
	void startsWithNoEndpointsAtGenerationOneAndNoPoolsForAServiceLeftToSpringCloud() {
		ServiceRuntime first = first(Map.of());
		assertThat(first.generation()).isOne();
		assertThat(first.snapshot().size()).isZero();
		assertThat(first.isBalancedHere()).isTrue();
		ServiceRuntime left = this.factory.first("legacy", settings(Map.of()), false);
		assertThat(left.isBalancedHere()).isFalse();
		assertThat(left.upstreamOrNull()).isNull();
	}

	@Test
	void equalSettingsChangeNothing() {
		ServiceRuntime current = first(Map.of());
		RuntimeFactory.Next next = this.factory.next(current, settings(Map.of()));
		assertThat(next.changed()).isFalse();
		assertThat(next.runtime()).isSameAs(current);
		assertThat(next.rebuiltFrom()).isNull();
		assertThat(next.replaced()).isNull();
	}

	@Test
	void aBalancerChangeRebuildsTheBalancerInPlaceKeepingEveryEndpointsState() {
		ServiceRuntime current = first(Map.of());
		current.balancer().update(List.of(member("a"), member("b")));
		Snapshot<Member> before = current.snapshot();
		RuntimeFactory.Next next = next(current, Map.of("algorithm", "least-requests"));
		assertThat(next.changed()).isTrue();
		assertThat(next.rebuiltFrom()).isSameAs(before);
		assertThat(next.runtime().balancer()).isSameAs(current.balancer());
		Snapshot<Member> after = next.runtime().snapshot();
		assertThat(after.settings().algorithm()).isEqualTo(Algorithm.LEAST_REQUESTS);
		assertThat(after.state(0)).isSameAs(before.state(0));
		assertThat(next.runtime().generation()).isEqualTo(2);
		assertThat(next.replaced()).as("the pools stay").isNull();
		assertThat(next.runtime().upstream()).isSameAs(current.upstream());
	}

	@ParameterizedTest(name = "{0}={1}: new pools {2}")
	@CsvSource({ "pool.max-connections, 8, true", "timeouts.connect, 1s, true", "timeouts.request-body-idle, 5s, false",
			"retry.attempts, 3, false" })
	void rebuildsThePoolsOnlyWhenTheClientChangesAndHandsBackTheOldOnesToRetire(String key, String value,
			boolean rebuilt) {
		ServiceRuntime current = first(Map.of());
		RuntimeFactory.Next next = next(current, Map.of(key, value));
		assertThat(next.changed()).isTrue();
		if (rebuilt) {
			assertThat(next.runtime().upstream()).isNotSameAs(current.upstream());
			assertThat(next.replaced()).isSameAs(current.upstream());
		}
		else {
			assertThat(next.runtime().upstream()).isSameAs(current.upstream());
			assertThat(next.replaced()).isNull();
		}
		assertThat(next.rebuiltFrom()).as("the balancer's settings stayed").isNull();
		assertThat(next.runtime().counters()).isSameAs(current.counters());
		assertThat(next.runtime().ejections()).isSameAs(current.ejections());
	}

	@Test
	void keepsTheRetryBudgetWhileTheRetrySettingsAreEqual() {
		ServiceRuntime current = first(Map.of());
		ServiceRuntime slowStart = next(current, Map.of("slow-start", "10s")).runtime();
		assertThat(slowStart.budget()).isSameAs(current.budget());
		ServiceRuntime budget = next(slowStart, Map.of("slow-start", "10s", "retry.budget-percent", "50")).runtime();
		assertThat(budget.budget()).isNotSameAs(current.budget());
	}

	@Test
	void startsKeepsRebuildsAndStopsHedgingWithItsSettings() {
		ServiceRuntime off = first(Map.of());
		assertThat(off.feature(HedgeState.class).hedging()).isNull();
		ServiceRuntime on = next(off, Map.of("hedge.max-extra-load", "0.05")).runtime();
		assertThat(on.feature(HedgeState.class).hedging()).isNotNull();
		assertThat(on.feature(HedgeState.class).hedging().delay().maxExtraLoad()).isEqualTo(0.05);
		ServiceRuntime kept = next(on, Map.of("hedge.max-extra-load", "0.05", "algorithm", "least-requests")).runtime();
		assertThat(kept.feature(HedgeState.class).hedging()).as("same hedge settings: the same window and budget")
			.isSameAs(on.feature(HedgeState.class).hedging());
		ServiceRuntime changed = next(kept,
				Map.of("hedge.max-extra-load", "0.05", "algorithm", "least-requests", "hedge.min-delay", "20ms"))
			.runtime();
		assertThat(changed.feature(HedgeState.class).hedging()).isNotNull()
			.isNotSameAs(on.feature(HedgeState.class).hedging());
		assertThat(next(changed, Map.of()).runtime().feature(HedgeState.class).hedging()).as("hedging off again")
			.isNull();
	}

	private ServiceRuntime first(Map<String, String> service) {
		ServiceRuntime runtime = this.factory.first("svc", settings(service), true);
		this.built.add(runtime);
		return runtime;
	}

	private RuntimeFactory.Next next(ServiceRuntime current, Map<String, String> service) {
		RuntimeFactory.Next next = this.factory.next(current, settings(service));
		this.built.add(next.runtime());
		return next;
	}

	/**
	 * Returns the settings of service {@code svc} with the given keys under
	 * {@code gateway.lb.services.svc}.
	 */
	private static ServiceSettings settings(Map<String, String> service) {
		Map<String, Object> properties = new HashMap<>();
		properties.put("gateway.lb.services.svc.algorithm", "round-robin");
		service.forEach((key, value) -> properties.put("gateway.lb.services.svc." + key, value));
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		return GatewayLbSettings.bind(environment).forService("svc");
	}

	private static Member member(String id) {
		return Member.of(TestRuntimes.instance(id, 1), 1);
	}

}
