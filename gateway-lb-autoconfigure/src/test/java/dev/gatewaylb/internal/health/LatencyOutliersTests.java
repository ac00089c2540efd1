package dev.gatewaylb.internal.health;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.IntStream;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.InFlightGuard;
import dev.gatewaylb.internal.balance.Snapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LatencyOutliersTests {

	private static final long SECOND = 1_000_000_000L;

	private static final long MS = 1_000_000L;

	private final AtomicLong clock = new AtomicLong(100 * SECOND);

	private final OutlierDetection detection = new OutlierDetection(5, 10 * SECOND, 50, FailureStatuses.SERVER_ERRORS,
			3);

	private final Ejections ejections = new Ejections();

	private final LatencyOutliers outliers = new LatencyOutliers();

	@Test
	void medianOfTheUsableValues() {
		assertThat(LatencyOutliers.median(new double[] { 200, 20, 21 })).isEqualTo(21);
		assertThat(LatencyOutliers.median(new double[] { 4, 1, Double.NaN, 3, 2 })).isEqualTo(2.5);
		assertThat(LatencyOutliers.median(new double[] { Double.NaN })).isNaN();
	}

	@Test
	void medianOfTheFirstSamples() {
		assertThat(LatencyOutliers.median(new long[] { 200, 20, 21, 99 }, 3)).isEqualTo(21);
		assertThat(LatencyOutliers.median(new long[] { 4, 1, 3, 2 }, 4)).isEqualTo(2.5);
	}

	@Test
	void ejectsAnEndpointSlowerThanTheFactorTimesTheMedian() {
		Balancer<Endpoint> balancer = balancer(4);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		samples(snapshot, 20, 20, 21, 21, 62);
		assertThat(evaluate(balancer)).isEmpty();
		// 3 x the median (21 ms) is 63 ms: 62 ms is not an outlier, 70 ms is.
		assertThat(this.outliers.lastMedianNanos()).isEqualTo(21 * MS);
		samples(snapshot, 20, 20, 21, 21, 70);
		assertThat(evaluate(balancer)).containsExactly(snapshot.state(3));
		EndpointState slow = snapshot.state(3);
		assertThat(slow.ejectedUntilNanos() - now()).isEqualTo(10 * SECOND);
		assertThat(slow.ejections()).isEqualTo(1);
		assertThat(this.ejections.ejected(now())).isEqualTo(1);
	}

	@Test
	void oneClientsTenPercentOfSamplesAtFiftyTimesTheLatencyDoNotEjectItsEndpoint() {
		// Five endpoints at 20 ms; on the first, one client's slow query is 10% of the
		// samples, at 1 s. Their mean would be 118 ms, more than 3 x 20 ms; their median
		// is 20 ms.
		Balancer<Endpoint> balancer = balancer(5);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		for (int round = 0; round < 10; round++) {
			sample(snapshot, 0, 9, 20);
			sample(snapshot, 0, 1, 1000);
			for (int i = 1; i < 5; i++) {
				sample(snapshot, i, 10, 20);
			}
		}
		assertThat(evaluate(balancer)).isEmpty();
		assertThat(this.outliers.latency(snapshot.state(0))).isEqualTo(20 * MS);
		assertThat(this.outliers.lastMedianNanos()).isEqualTo(20 * MS);
	}

	@Test
	void anEndpointSlowForMostOfItsRequestsIsStillEjected() {
		Balancer<Endpoint> balancer = balancer(5);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		sample(snapshot, 0, 40, 20);
		sample(snapshot, 0, 60, 1000);
		for (int i = 1; i < 5; i++) {
			sample(snapshot, i, 100, 20);
		}
		assertThat(evaluate(balancer)).containsExactly(snapshot.state(0));
	}

	@Test
	void aBusyEndpointsLatencyIsTheMedianOfItsLatestSamples() {
		Balancer<Endpoint> balancer = balancer(3);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		// Slow at the start of the window, fast for the last 128 samples of it.
		sample(snapshot, 0, 200, 200);
		sample(snapshot, 0, EndpointState.LATENCY_RING, 21);
		sample(snapshot, 1, 20, 20);
		sample(snapshot, 2, 20, 20);
		assertThat(evaluate(balancer)).isEmpty();
		assertThat(this.outliers.latency(snapshot.state(0))).isEqualTo(21 * MS);
	}

	@Test
	void needsTheMinimumSamplesInEveryCountedWindow() {
		Balancer<Endpoint> balancer = balancer(3);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		samples(snapshot, 19, 20, 20, 200);
		assertThat(evaluate(balancer)).isEmpty();
		assertThat(this.outliers.latency(snapshot.state(2))).isNaN();
		// One more sample each closes the windows, which then hold 20 samples.
		samples(snapshot, 1, 20, 20, 200);
		assertThat(evaluate(balancer)).containsExactly(snapshot.state(2));
	}

	@Test
	void needsThreeEndpointsWithAnAverage() {
		// A factor of 1.5 would find 200 ms an outlier beside 20 ms, were two endpoints
		// enough: their median is 110 ms.
		OutlierDetection detection = new OutlierDetection(5, 10 * SECOND, 50, FailureStatuses.SERVER_ERRORS, 1.5);
		Balancer<Endpoint> balancer = balancer(3);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		sample(snapshot, 0, 20, 20);
		sample(snapshot, 2, 20, 200);
		assertThat(this.outliers.evaluate(snapshot, this.ejections, detection, now())).isEmpty();
		// The third endpoint's window closes later; the others' averages stand.
		sample(snapshot, 1, 20, 20);
		assertThat(this.outliers.evaluate(snapshot, this.ejections, detection, now()))
			.containsExactly(snapshot.state(2));
	}

	@Test
	void aSlowWindowStartsAfreshAfterTheEjection() {
		Balancer<Endpoint> balancer = balancer(3);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		samples(snapshot, 20, 20, 20, 200);
		assertThat(evaluate(balancer)).containsExactly(snapshot.state(2));
		this.clock.addAndGet(10 * SECOND);
		// Back, and fast now: its old slow window is forgotten.
		snapshot = balancer.reevaluate();
		evaluate(balancer);
		samples(snapshot, 20, 20, 20, 21);
		assertThat(evaluate(balancer)).isEmpty();
		assertThat(this.outliers.latency(snapshot.state(2))).isEqualTo(21 * MS);
	}

	@Test
	void neverEjectsBeyondMaxEjectionPercent() {
		// Seven endpoints, 40%: two may be out at once, and the cap is shared with
		// failure ejections. One is out for failures, two are slow: one of them goes.
		OutlierDetection detection = new OutlierDetection(5, 10 * SECOND, 40, FailureStatuses.SERVER_ERRORS, 3);
		Balancer<Endpoint> balancer = balancer(7);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		assertThat(detection.eject(snapshot.state(6), snapshot, this.ejections, now())).isTrue();
		samples(snapshot, 20, 20, 20, 20, 20, 200, 200);
		List<EndpointState> ejected = this.outliers.evaluate(snapshot, this.ejections, detection, now());
		assertThat(ejected).hasSize(1);
		assertThat(this.ejections.ejected(now())).isEqualTo(2);
		assertThat(snapshot.state(4).isEjected(now()) ^ snapshot.state(5).isEjected(now())).isTrue();
	}

	@Test
	void offEjectsNothing() {
		Balancer<Endpoint> balancer = balancer(3);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		samples(snapshot, 20, 20, 20, 2000);
		assertThat(this.outliers.evaluate(snapshot, this.ejections, new OutlierDetection(5, 10 * SECOND, 50), now()))
			.isEmpty();
	}

	private List<EndpointState> evaluate(Balancer<Endpoint> balancer) {
		return this.outliers.evaluate(balancer.snapshot(), this.ejections, this.detection, now());
	}

	private void samples(Snapshot<Endpoint> snapshot, int count, long... latencyMillis) {
		for (int i = 0; i < latencyMillis.length; i++) {
			sample(snapshot, i, count, latencyMillis[i]);
		}
	}

	private void sample(Snapshot<Endpoint> snapshot, int index, int count, long latencyMillis) {
		for (int n = 0; n < count; n++) {
			InFlightGuard guard = snapshot.acquire(index);
			guard.start(now());
			guard.recordLatency(now() + latencyMillis * MS);
			guard.release();
		}
	}

	private Balancer<Endpoint> balancer(int size) {
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS.withAlgorithm(Algorithm.ROUND_ROBIN),
				Function.identity(), this.clock::get, () -> null);
		balancer.update(IntStream.range(0, size).mapToObj((i) -> Endpoint.of("10.0.0." + (i + 1), 80, 1)).toList());
		return balancer;
	}

	private long now() {
		return this.clock.get();
	}

}
