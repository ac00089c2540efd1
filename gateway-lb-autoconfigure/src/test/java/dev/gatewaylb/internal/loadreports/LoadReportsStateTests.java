package dev.gatewaylb.internal.loadreports;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.ServiceView;
import dev.gatewaylb.internal.loadreports.core.LoadReportParser;
import dev.gatewaylb.internal.loadreports.core.LoadWeights;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * A service's load reports on a clock the test moves: reports read from answers, the
 * weights the job hands the balancer, garbage counted and ignored.
 */
class LoadReportsStateTests {

	private static final long S = 1_000_000_000L;

	private static final LoadWeights.Settings WEIGHTS = new LoadWeights.Settings(
			List.of("application_utilization", "cpu_utilization"), 10 * S, 180 * S, 1.0, 10);

	private static final LoadReportsSettings ON = new LoadReportsSettings(true, WEIGHTS, null, Duration.ofSeconds(10));

	private final AtomicLong clock = new AtomicLong(1_000 * S);

	private final List<Endpoint> endpoints = List.of(Endpoint.of("10.0.0.1", 80, 1), Endpoint.of("10.0.0.2", 80, 1),
			Endpoint.of("10.0.0.3", 80, 1), Endpoint.of("10.0.0.4", 80, 1));

	@Test
	void aFastEndpointThatReportsBusyLosesItsShareWithinTwoUpdatesAndGetsItBackAfter() {
		Service service = service(Algorithm.ROUND_ROBIN);
		LoadReportsState state = state(ON);
		// Two small endpoints at 80%, two large ones at 20%, 100 answers a second each:
		// weights 125 and 500, a quarter of the large ones' each for the small ones.
		double[] utilization = { 0.8, 0.8, 0.2, 0.2 };
		for (int second = 0; second < 12; second++) {
			second(state, service, utilization);
		}
		double steady = share(service, 2);
		assertThat(steady).isCloseTo(0.4, within(0.01));
		// The antagonist: the third reports 0.95 for 5 s.
		utilization[2] = 0.95;
		List<Double> during = new ArrayList<>();
		for (int second = 0; second < 5; second++) {
			second(state, service, utilization);
			during.add(share(service, 2));
		}
		// 100 / 0.95 = 105 against 125, 125 and 500: 12% after the first update.
		assertThat(during.get(1)).isLessThan(steady / 3);
		assertThat(during).allSatisfy((share) -> assertThat(share).isLessThan(steady / 3));
		utilization[2] = 0.2;
		second(state, service, utilization);
		second(state, service, utilization);
		assertThat(share(service, 2)).isCloseTo(steady, within(0.01));
		assertThat(state.weight("10.0.0.3:80")).isGreaterThan(state.weight("10.0.0.1:80"));
	}

	@Test
	void anEndpointReportingNoUtilizationWhileFailingHalfGetsNoMoreThanItsPenalisedWeight() {
		Service service = service(Algorithm.ROUND_ROBIN);
		LoadReportsState state = state(ON);
		for (int second = 0; second < 12; second++) {
			long now = this.clock.addAndGet(S);
			for (int i = 0; i < 100; i++) {
				read(state, "10.0.0.1:80", 200, "TEXT application_utilization=0.5");
				read(state, "10.0.0.2:80", 200, "TEXT application_utilization=0.5");
				read(state, "10.0.0.3:80", 200, "TEXT application_utilization=0.5");
				// Half of its answers fail; it reports nothing busy.
				read(state, "10.0.0.4:80", (i % 2 == 0) ? 500 : 200, "TEXT application_utilization=0");
			}
			assertThat(now).isPositive();
			state.weigh(service);
		}
		// Its penalised weight: 100 / (0 + 50 / 100) = 200; the others 100 / 0.5 = 200
		// too. Without the penalty it would take the mean, and with a higher penalty
		// less: no more than its penalised weight.
		double others = state.weight("10.0.0.1:80");
		assertThat(state.weight("10.0.0.4:80")).isLessThanOrEqualTo(others + 1e-9);
		LoadReportsState harsh = state(
				new LoadReportsSettings(true, new LoadWeights.Settings(WEIGHTS.utilization(), 10 * S, 180 * S, 4.0, 10),
						null, Duration.ofSeconds(10)));
		for (int second = 0; second < 12; second++) {
			this.clock.addAndGet(S);
			for (int i = 0; i < 100; i++) {
				read(harsh, "10.0.0.1:80", 200, "TEXT application_utilization=0.5");
				read(harsh, "10.0.0.2:80", 200, "TEXT application_utilization=0.5");
				read(harsh, "10.0.0.3:80", 200, "TEXT application_utilization=0.5");
				read(harsh, "10.0.0.4:80", (i % 2 == 0) ? 500 : 200, "TEXT application_utilization=0");
			}
			harsh.weigh(service);
		}
		// 100 / (50 / 100 x 4) = 50 against 200: a quarter.
		assertThat(harsh.weight("10.0.0.4:80") / harsh.weight("10.0.0.1:80")).isCloseTo(0.25, within(1e-6));
		assertThat(share(service, 3)).isCloseTo(50.0 / 650, within(0.01));
	}

	@Test
	void garbageIsCountedByReasonAndIgnored() {
		Service service = service(Algorithm.ROUND_ROBIN);
		LoadReportsState state = state(ON);
		double[] utilization = { 0.5, 0.5, 0.5, 0.25 };
		for (int second = 0; second < 12; second++) {
			second(state, service, utilization);
		}
		double before = state.weight("10.0.0.4:80");
		assertThat(before).isGreaterThan(1);
		for (String garbage : List.of("TEXT application_utilization=NaN", "TEXT cpu_utilization=-1",
				"TEXT mem_utilization=1.5", "XML <load/>", "TEXT application_utilization")) {
			HttpHeaders headers = new HttpHeaders();
			headers.set(LoadReportParser.HEADER, garbage);
			state.read("10.0.0.4:80", 200, headers, true);
			assertThat(headers.containsHeader(LoadReportParser.HEADER)).as("kept from the client").isFalse();
		}
		assertThat(state.rejected(LoadReportParser.Rejection.NOT_A_NUMBER)).isEqualTo(1);
		assertThat(state.rejected(LoadReportParser.Rejection.NEGATIVE)).isEqualTo(1);
		assertThat(state.rejected(LoadReportParser.Rejection.OUT_OF_RANGE)).isEqualTo(1);
		assertThat(state.rejected(LoadReportParser.Rejection.UNPARSEABLE)).isEqualTo(2);
		this.clock.addAndGet(S);
		state.weigh(service);
		assertThat(state.weight("10.0.0.4:80")).as("the last good report still counts").isCloseTo(before, within(1e-9));
	}

	@Test
	void noWeightCountsInTheBlackoutAndAnExpiredOneFallsBackToTheMean() {
		Service service = service(Algorithm.LEAST_REQUESTS);
		LoadReportsState state = state(ON);
		double[] utilization = { 0.5, 0.5, 0.5, 0.1 };
		for (int second = 0; second < 10; second++) {
			second(state, service, utilization);
			assertThat(state.weight("10.0.0.4:80")).as("second %d, in blackout", second).isEqualTo(1);
		}
		second(state, service, utilization);
		second(state, service, utilization);
		assertThat(state.weight("10.0.0.4:80")).isGreaterThan(2);
		// Nothing more from anyone for three minutes: every weight expires.
		this.clock.addAndGet(181 * S);
		state.weigh(service);
		assertThat(state.weight("10.0.0.4:80")).isEqualTo(1);
		assertThat(service.balancer.snapshot().select(null)).as("plain least-requests again: the first idle").isZero();
	}

	@Test
	void disabledPassesTheHeadersAndWeighsNothing() {
		Service service = service(Algorithm.ROUND_ROBIN);
		LoadReportsState state = state(LoadReportsSettings.OFF);
		HttpHeaders headers = new HttpHeaders();
		headers.set(LoadReportParser.HEADER, "TEXT application_utilization=0.9");
		state.read("10.0.0.1:80", 200, headers, true);
		assertThat(headers.getFirst(LoadReportParser.HEADER)).isEqualTo("TEXT application_utilization=0.9");
		long generation = service.balancer.snapshot().generation();
		this.clock.addAndGet(S);
		state.weigh(service);
		assertThat(service.balancer.snapshot().generation()).isEqualTo(generation);
		assertThat(state.report(service.snapshot(), this.clock.get())).isNull();
	}

	@Test
	void theReportShowsEachEndpointsLastReportAgeAndWeight() {
		Service service = service(Algorithm.ROUND_ROBIN);
		LoadReportsState state = state(ON);
		double[] utilization = { 0.5, 0.5, 0.5, 0.25 };
		for (int second = 0; second < 12; second++) {
			second(state, service, utilization);
		}
		this.clock.addAndGet(S / 2);
		var report = state.report(service.snapshot(), this.clock.get());
		assertThat(report).isNotNull();
		assertThat(report.weighing()).isTrue();
		var last = report.endpoints().get(3);
		assertThat(last.address()).isEqualTo("10.0.0.4:80");
		assertThat(last.utilization()).isEqualTo(0.25);
		assertThat(last.applicationUtilization()).isEqualTo(0.25);
		assertThat(last.cpuUtilization()).isNull();
		assertThat(last.ageMillis()).isEqualTo(1_500);
		assertThat(last.counted()).isTrue();
		// 400 against 200, 200, 200: 1.6 times the mean of 250.
		assertThat(last.weight()).isCloseTo(1.6, within(1e-9));
	}

	/**
	 * One second: each endpoint answers 100 times, reporting its utilization, then the
	 * job runs.
	 */
	private void second(LoadReportsState state, Service service, double[] utilization) {
		for (int i = 0; i < 100; i++) {
			for (int e = 0; e < this.endpoints.size(); e++) {
				read(state, this.endpoints.get(e).address(), 200, "TEXT application_utilization=" + utilization[e]);
			}
		}
		this.clock.addAndGet(S);
		state.weigh(service);
	}

	private static void read(LoadReportsState state, String address, int status, String report) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(LoadReportParser.HEADER, report);
		state.read(address, status, headers, true);
	}

	/**
	 * Returns the share of endpoint {@code index} over one round-robin period.
	 */
	private static double share(Service service, int index) {
		Snapshot<Endpoint> snapshot = service.balancer.snapshot();
		int picks = 10_000;
		int of = 0;
		for (int i = 0; i < picks; i++) {
			of += (snapshot.select(null) == index) ? 1 : 0;
		}
		return (double) of / picks;
	}

	private LoadReportsState state(LoadReportsSettings settings) {
		return LoadReportsState.FEATURE.next(null, settings,
				new Feature.Context("api", this.clock::get, () -> 1_700_000_000_000L));
	}

	private Service service(Algorithm algorithm) {
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS.withAlgorithm(algorithm),
				Function.identity(), this.clock::get, java.util.concurrent.ThreadLocalRandom::current);
		balancer.update(this.endpoints);
		return new Service(balancer, this.clock);
	}

	private record Service(Balancer<Endpoint> balancer, AtomicLong clock) implements ServiceView {

		@Override
		public String id() {
			return "api";
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
