package dev.gatewaylb.internal.loadreports.core;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Weights from reports as gRFC A58 derives them, on a clock the test drives: the formula,
 * the utilization chosen, the blackout, the expiry, the mean for the silent, the cap
 * against the others.
 */
class LoadWeightsTests {

	private static final long S = 1_000_000_000L;

	private static final LoadWeights.Settings SETTINGS = new LoadWeights.Settings(
			List.of("application_utilization", "cpu_utilization"), 10 * S, 180 * S, 1.0, 10);

	@Test
	void aWeightIsQpsOverUtilizationPlusTheErrorPenalty() {
		LoadReport report = new LoadReport(0.5, 0.9, LoadReport.ABSENT, 100, 10, Map.of());
		// 100 / (0.5 + 10 / 100 x 1.0)
		assertThat(LoadWeights.weight(report, SETTINGS, 0, 0)).isCloseTo(100 / 0.6, within(1e-9));
		LoadReport withoutRate = new LoadReport(LoadReport.ABSENT, 0.25, LoadReport.ABSENT, LoadReport.ABSENT,
				LoadReport.ABSENT, Map.of());
		assertThat(LoadWeights.weight(withoutRate, SETTINGS, 50, 25)).as("the gateway's own counts")
			.isCloseTo(50 / (0.25 + 0.5), within(1e-9));
		assertThat(LoadWeights.weight(withoutRate, SETTINGS, 0, 0)).as("no queries, no weight").isZero();
	}

	@Test
	void aBackendReportingNoUtilizationWhileFailingHalfItsRequestsGetsOnlyItsPenalisedWeight() {
		LoadReport lying = new LoadReport(0, 0, LoadReport.ABSENT, 100, 50, Map.of());
		// 100 / (0 + 50 / 100 x 1.0): not the mean, which a failing endpoint must not get
		// by reporting nothing.
		assertThat(LoadWeights.weight(lying, SETTINGS, 0, 0)).isCloseTo(200, within(1e-9));
		LoadReport idle = new LoadReport(0, 0, LoadReport.ABSENT, 100, 0, Map.of());
		assertThat(LoadWeights.weight(idle, SETTINGS, 0, 0)).as("0 utilization, no errors: the mean").isZero();
		LoadReport failing = new LoadReport(0.01, LoadReport.ABSENT, LoadReport.ABSENT, 100, 50, Map.of());
		// 100 / (0.01 + 0.5): the errors, not the tiny utilization, decide.
		assertThat(LoadWeights.weight(failing, SETTINGS, 0, 0)).isCloseTo(100 / 0.51, within(1e-9));
	}

	@Test
	void namedMetricsComeFirstAndTheLargestReportedCounts() {
		LoadReport report = new LoadReport(0.2, 0.3, LoadReport.ABSENT, LoadReport.ABSENT, LoadReport.ABSENT,
				Map.of("kv_cache", 0.9, "queue", 0.4));
		assertThat(report.utilization(List.of("named_metrics.kv_cache", "named_metrics.queue"))).isEqualTo(0.9);
		assertThat(report.utilization(List.of("named_metrics.missing", "cpu_utilization"))).as("none reported")
			.isEqualTo(0.3);
		assertThat(report.utilization(List.of("application_utilization", "cpu_utilization"))).isEqualTo(0.2);
		assertThat(new LoadReport(0, 0.3, 0, 0, 0, Map.of())
			.utilization(List.of("application_utilization", "cpu_utilization"))).as("the first above 0").isEqualTo(0.3);
	}

	@Test
	void aWeightCountsAfterItsBlackoutAndStopsOnceExpired() {
		LoadWeights.EndpointLoad load = new LoadWeights.EndpointLoad();
		LoadReport report = new LoadReport(0.5, LoadReport.ABSENT, LoadReport.ABSENT, 100, 0, Map.of());
		load.reported(report, 0);
		load.update(SETTINGS, 0, 0, 0);
		assertThat(load.current(SETTINGS, 9 * S)).as("in blackout").isZero();
		load.reported(report, 9 * S);
		load.update(SETTINGS, 0, 0, 9 * S);
		assertThat(load.current(SETTINGS, 10 * S)).isEqualTo(200);
		assertThat(load.current(SETTINGS, (9 + 180) * S)).as("expired").isZero();
		load.reported(report, 200 * S);
		load.update(SETTINGS, 0, 0, 200 * S);
		assertThat(load.current(SETTINGS, 201 * S)).as("a new blackout after expiry").isZero();
		assertThat(load.current(SETTINGS, 210 * S)).isEqualTo(200);
		load.reported(new LoadReport(0, 0, 0, 0, 0, Map.of()), 211 * S);
		load.update(SETTINGS, 0, 0, 211 * S);
		assertThat(load.current(SETTINGS, 212 * S)).as("an unusable report").isZero();
	}

	@Test
	void theSilentTakeTheMeanAndNoneExceedsTenTimesTheOthersMean() {
		double[] weights = { 100, 300, 0, 0 };
		LoadWeights.balance(weights, 10);
		assertThat(weights).containsExactly(100, 300, 200, 200);
		double[] tiny = { 10_000, 1, 1, 1 };
		LoadWeights.balance(tiny, 10);
		assertThat(tiny).containsExactly(10, 1, 1, 1);
		double[] none = { 0, 0, 0 };
		LoadWeights.balance(none, 10);
		assertThat(none).containsExactly(1, 1, 1);
	}

	@Test
	void anUpdateWeighsByTheMeanUtilizationOfTheReportsSinceTheLastOne() {
		LoadWeights.EndpointLoad load = new LoadWeights.EndpointLoad();
		List<String> fields = List.of("application_utilization");
		// A backend of two workers reports 0.5 or 1.0 with each answer, nothing between.
		for (int i = 0; i < 10; i++) {
			load.reported(new LoadReport(1.0, LoadReport.ABSENT, LoadReport.ABSENT, 100, 0, Map.of()), fields, S);
			load.reported(new LoadReport(0.5, LoadReport.ABSENT, LoadReport.ABSENT, 100, 0, Map.of()), fields, S);
		}
		load.update(SETTINGS, 0, 0, S);
		LoadWeights.Settings noBlackout = new LoadWeights.Settings(SETTINGS.utilization(), 0,
				SETTINGS.expirationNanos(), 1.0, 10);
		// 100 / 0.75, not 100 / 0.5 (the latest report).
		assertThat(load.current(noBlackout, S)).isCloseTo(100 / 0.75, within(1e-9));
		load.reported(new LoadReport(0.25, LoadReport.ABSENT, LoadReport.ABSENT, 100, 0, Map.of()), fields, 2 * S);
		load.update(SETTINGS, 0, 0, 2 * S);
		assertThat(load.current(noBlackout, 2 * S)).as("a new second, a new mean").isCloseTo(400, within(1e-9));
	}

}
