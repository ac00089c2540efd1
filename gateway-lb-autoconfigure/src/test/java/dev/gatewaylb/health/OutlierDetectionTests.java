package dev.gatewaylb.health;

import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.gatewaylb.balance.Algorithm;
import dev.gatewaylb.balance.Balancer;
import dev.gatewaylb.balance.BalancerSettings;
import dev.gatewaylb.balance.Endpoint;
import dev.gatewaylb.balance.Snapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class OutlierDetectionTests {

	private static final long SECOND = 1_000_000_000L;

	private static final long SEED = 5;

	/**
	 * One source for the whole test, so that each pick draws afresh.
	 */
	private final Random random = new Random(SEED);

	private final AtomicLong clock = new AtomicLong(100 * SECOND);

	private final OutlierDetection detection = new OutlierDetection(3, 10 * SECOND, 50);

	@Test
	void ejectsAfterTheConsecutiveFailuresAndOnlyThen() {
		Balancer<Endpoint> balancer = balancer(Algorithm.ROUND_ROBIN, 4);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, now())).isFalse();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, now())).isFalse();
		this.detection.succeeded(snapshot.state(0), now());
		assertThat(this.detection.failed(snapshot.state(0), snapshot, now())).isFalse();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, now())).isFalse();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, now())).isTrue();
		Snapshot<Endpoint> after = balancer.reevaluate();
		assertThat(picks(after, 30)).doesNotContain("a");
	}

	@Test
	void returnsAfterTheEjectionTimeRampingUnderSlowStartAndEjectsLongerTheNextTime() {
		Balancer<Endpoint> balancer = new Balancer<>(
				new BalancerSettings(Algorithm.ROUND_ROBIN, 20 * SECOND, BalancerSettings.DEFAULTS.ewmaDecayNanos()),
				Function.identity(), this.clock::get, () -> null);
		balancer.update(endpoints(2));
		eject(balancer, 0);
		this.clock.addAndGet(10 * SECOND - 1);
		assertThat(picks(balancer.snapshot(), 10)).doesNotContain("a");
		this.clock.addAndGet(1);
		// The first pick after the ejection ends rebuilds; a is back at a tenth.
		picks(balancer.snapshot(), 1);
		assertThat(balancer.snapshot().effectiveWeight(0)).isEqualTo(0.1);
		// Weights 0.1 and 1 are 1 and 10: one pick in 11.
		assertThat(picks(balancer.snapshot(), 11 * 4).chars().filter((c) -> c == 'a').count()).isEqualTo(4);
		eject(balancer, 0);
		assertThat(balancer.snapshot().state(0).ejectedUntilNanos() - now()).isEqualTo(20 * SECOND);
	}

	@Test
	void neverEjectsMoreThanTheMaximumPercentButAlwaysOne() {
		Balancer<Endpoint> balancer = balancer(Algorithm.LEAST_REQUESTS, 3);
		eject(balancer, 0);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		for (int i = 0; i < 10; i++) {
			assertThat(this.detection.failed(snapshot.state(1), snapshot, now())).isFalse();
		}
		assertThat(snapshot.state(1).isEjected(now())).isFalse();
		OutlierDetection strict = new OutlierDetection(1, SECOND, 10);
		Balancer<Endpoint> small = balancer(Algorithm.ROUND_ROBIN, 3);
		assertThat(strict.failed(small.snapshot().state(2), small.snapshot(), now())).isTrue();
	}

	@Test
	void failsOpenAcrossEveryEndpointWhenAllAreOut() {
		OutlierDetection eager = new OutlierDetection(1, 10 * SECOND, 100);
		Balancer<Endpoint> balancer = balancer(Algorithm.ROUND_ROBIN, 2);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		assertThat(eager.failed(snapshot.state(0), snapshot, now())).isTrue();
		assertThat(eager.failed(snapshot.state(1), snapshot, now())).isTrue();
		Snapshot<Endpoint> out = balancer.reevaluate();
		assertThat(out.isFailOpen()).isTrue();
		assertThat(picks(out, 4)).isEqualTo("abab");
		balancer.drain(out.endpoint(0).address(), true);
		balancer.drain(out.endpoint(1).address(), true);
		assertThat(balancer.snapshot().isFailOpen()).isFalse();
		assertThat(balancer.snapshot().select(null)).as("drained endpoints never fail open").isEqualTo(-1);
	}

	@Test
	void keepsAnEndpointThatActiveChecksFindUnhealthyOut() {
		Balancer<Endpoint> balancer = balancer(Algorithm.POWER_OF_TWO_CHOICES, 3);
		assertThat(balancer.snapshot().state(1).markHealthy(false)).isTrue();
		assertThat(balancer.snapshot().state(1).markHealthy(false)).isFalse();
		Snapshot<Endpoint> snapshot = balancer.reevaluate();
		String picks = picks(snapshot, 200);
		assertThat(picks).as("seed %d", SEED).doesNotContain("b");
		// Both others must come up, or the draws were all the same and proved nothing.
		assertThat(picks).as("seed %d", SEED).contains("a", "c");
	}

	@Test
	void countsOnlyTheChosenStatusesAsFailures() {
		OutlierDetection gatewayFailures = new OutlierDetection(5, SECOND, 50,
				FailureStatuses.of(List.of(502, 503, 504)));
		assertThat(gatewayFailures.countsAsFailure(502)).isTrue();
		assertThat(gatewayFailures.countsAsFailure(504)).isTrue();
		assertThat(gatewayFailures.countsAsFailure(500)).isFalse();
		assertThat(gatewayFailures.countsAsFailure(505)).isFalse();
		assertThat(gatewayFailures.countsAsFailure(200)).isFalse();
		assertThat(this.detection.countsAsFailure(500)).isTrue();
		assertThat(this.detection.countsAsFailure(599)).isTrue();
		assertThat(this.detection.countsAsFailure(499)).isFalse();
	}

	private void eject(Balancer<Endpoint> balancer, int index) {
		OutlierDetection once = new OutlierDetection(1, 10 * SECOND, 100);
		assertThat(once.failed(balancer.snapshot().state(index), balancer.snapshot(), now())).isTrue();
		balancer.reevaluate();
	}

	private Balancer<Endpoint> balancer(Algorithm algorithm, int size) {
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS.withAlgorithm(algorithm),
				Function.identity(), this.clock::get, () -> this.random);
		balancer.update(endpoints(size));
		return balancer;
	}

	private static List<Endpoint> endpoints(int size) {
		return java.util.stream.IntStream.range(0, size)
			.mapToObj((i) -> Endpoint.of("10.0.0." + (i + 1), 80, 1))
			.toList();
	}

	private static String picks(Snapshot<Endpoint> snapshot, int count) {
		StringBuilder picks = new StringBuilder();
		for (int i = 0; i < count; i++) {
			picks.append((char) ('a' + snapshot.select(null)));
		}
		return picks.toString();
	}

	private long now() {
		return this.clock.get();
	}

}
