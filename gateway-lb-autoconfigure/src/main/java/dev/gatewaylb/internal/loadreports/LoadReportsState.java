package dev.gatewaylb.internal.loadreports;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.actuate.GatewayLbReport.EndpointLoadReport;
import dev.gatewaylb.actuate.GatewayLbReport.LoadReportsReport;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.Metered;
import dev.gatewaylb.internal.feature.ServiceView;
import dev.gatewaylb.internal.loadreports.core.LoadReport;
import dev.gatewaylb.internal.loadreports.core.LoadReportParser;
import dev.gatewaylb.internal.loadreports.core.LoadWeights;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * A service's load reports ({@code load-reports}): each endpoint's latest report, read
 * from its answers on the event loops ({@link #read}), and the weights the
 * {@code load-report-weights} job computes from them every {@link #INTERVAL} on the
 * control thread and hands to the balancer ({@code Balancer.loadWeights}). The request
 * path parses a header, publishes the report with two volatile writes and adds to two
 * counters; it never computes a weight.
 * <p>
 * The weights apply to {@code round-robin}, {@code least-requests} and
 * {@code power-of-two-choices}; a service on another algorithm reads and counts the
 * reports (the report shows them) without weighing by them.
 */
public final class LoadReportsState implements Metered {

	/**
	 * The feature: a service's state, and the {@code load-report-weights} job.
	 */
	public static final Feature<LoadReportsSettings, LoadReportsState> FEATURE = new Feature<>() {

		@Override
		public Class<LoadReportsState> stateType() {
			return LoadReportsState.class;
		}

		@Override
		public LoadReportsState next(@Nullable LoadReportsState previous, LoadReportsSettings settings,
				Context service) {
			if (previous != null && previous.settings.equals(settings)) {
				return previous;
			}
			// The endpoints' reports and the counts are carried: new settings weigh the
			// same reports.
			return new LoadReportsState(settings, service,
					(previous != null) ? previous.endpoints : new ConcurrentHashMap<>(),
					(previous != null) ? previous.rejected : rejectedCounters(),
					(previous != null) && previous.applied);
		}

		@Override
		public List<Job<LoadReportsState>> jobs() {
			return List.of(new Job<>("load-report-weights", INTERVAL, LoadReportsState::weigh),
					new Job<>("load-report-probe", INTERVAL, LoadReportsState::probe));
		}

	};

	/**
	 * How often the weights are recomputed.
	 */
	public static final Duration INTERVAL = Duration.ofSeconds(1);

	static final String REJECTED = "gateway.lb.load-reports.rejected";

	/**
	 * The longest a probe waits for its answer.
	 */
	static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

	private final LoadReportsSettings settings;

	private final Feature.Context service;

	private final ConcurrentHashMap<String, Endpoint> endpoints;

	private final Map<LoadReportParser.Rejection, LongAdder> rejected;

	// Control thread only.

	/**
	 * Whether the balancer holds weights from this feature.
	 */
	private boolean applied;

	private long lastWeighedNanos = Long.MIN_VALUE;

	private LoadReportsState(LoadReportsSettings settings, Feature.Context service,
			ConcurrentHashMap<String, Endpoint> endpoints, Map<LoadReportParser.Rejection, LongAdder> rejected,
			boolean applied) {
		this.settings = settings;
		this.service = service;
		this.endpoints = endpoints;
		this.rejected = rejected;
		this.applied = applied;
	}

	private static Map<LoadReportParser.Rejection, LongAdder> rejectedCounters() {
		Map<LoadReportParser.Rejection, LongAdder> counters = new EnumMap<>(LoadReportParser.Rejection.class);
		for (LoadReportParser.Rejection reason : LoadReportParser.Rejection.values()) {
			counters.put(reason, new LongAdder());
		}
		return counters;
	}

	/**
	 * Returns the settings the state was built from.
	 * @return the settings
	 */
	public LoadReportsSettings settings() {
		return this.settings;
	}

	/**
	 * Reads the load report of an endpoint's answer, if the service reads them: counts
	 * the answer (and whether it is an error) for the weights of endpoints that report no
	 * rate, publishes the report, or counts why it was refused, and takes the report's
	 * headers out of what the client gets. On the event loop; allocates the report's
	 * values only.
	 * @param address the endpoint's {@code host:port}
	 * @param status the answer's status
	 * @param headers the answer's headers, as the client will get them
	 * @param mutable whether the headers may still be changed (the answer is not
	 * committed)
	 */
	public void read(String address, int status, HttpHeaders headers, boolean mutable) {
		if (!this.settings.enabled()) {
			return;
		}
		Endpoint endpoint = endpoint(address);
		endpoint.answers.increment();
		if (status >= 500) {
			endpoint.errors.increment();
		}
		String text = headers.getFirst(LoadReportParser.HEADER);
		String binary = (text != null) ? null : headers.getFirst(LoadReportParser.BINARY_HEADER);
		if (text == null && binary == null) {
			return;
		}
		if (mutable) {
			headers.remove(LoadReportParser.HEADER);
			headers.remove(LoadReportParser.BINARY_HEADER);
		}
		take(endpoint, text, binary);
	}

	/**
	 * Reads the load report of an endpoint's trailers (a gRPC answer's), and takes it out
	 * of them. The answer itself was counted with its headers.
	 * @param address the endpoint's {@code host:port}
	 * @param trailers the trailers, a copy the client gets
	 */
	public void trailers(String address, HttpHeaders trailers) {
		if (!this.settings.enabled()) {
			return;
		}
		String text = trailers.getFirst(LoadReportParser.HEADER);
		String binary = (text != null) ? null : trailers.getFirst(LoadReportParser.BINARY_HEADER);
		trailers.remove(LoadReportParser.HEADER);
		trailers.remove(LoadReportParser.BINARY_HEADER);
		if (text != null || binary != null) {
			take(endpoint(address), text, binary);
		}
	}

	/**
	 * Takes an endpoint's report from where it came (an answer's headers or trailers, a
	 * probe's answer): {@code endpoint-load-metrics} if present, else
	 * {@code endpoint-load-metrics-bin}; nothing when neither is.
	 */
	private void take(Endpoint endpoint, @Nullable String text, @Nullable String binary) {
		if (text != null) {
			accept(endpoint, LoadReportParser.parse(text));
		}
		else if (binary != null) {
			accept(endpoint, LoadReportParser.parseBinary(binary));
		}
	}

	private void accept(Endpoint endpoint, LoadReportParser.Parsed parsed) {
		if (parsed instanceof LoadReport report) {
			endpoint.load.reported(report, this.settings.weights().utilization(), this.service.nanoClock().getAsLong());
		}
		else if (parsed instanceof LoadReportParser.Rejection reason) {
			this.rejected.get(reason).increment();
		}
	}

	private Endpoint endpoint(String address) {
		Endpoint endpoint = this.endpoints.get(address);
		// Made once per endpoint, by its first answer if the job has not made it yet.
		return (endpoint != null) ? endpoint : this.endpoints.computeIfAbsent(address, (a) -> new Endpoint());
	}

	/**
	 * The job: every endpoint's weight from its reports, and, when the service's
	 * algorithm weighs by them, the weights handed to the balancer.
	 */
	void weigh(ServiceView service) {
		Snapshot<?> snapshot = service.snapshot();
		long now = service.nanoTime();
		double seconds = (this.lastWeighedNanos == Long.MIN_VALUE) ? 0 : (now - this.lastWeighedNanos) / 1e9;
		this.lastWeighedNanos = now;
		if (!this.settings.enabled()) {
			lift(service);
			return;
		}
		int n = snapshot.size();
		double[] weights = new double[n];
		Set<String> present = new HashSet<>();
		for (int i = 0; i < n; i++) {
			String address = snapshot.endpoint(i).address();
			present.add(address);
			Endpoint endpoint = endpoint(address);
			long answers = endpoint.answers.sum();
			long errors = endpoint.errors.sum();
			double qps = (seconds > 0) ? (answers - endpoint.lastAnswers) / seconds : 0;
			double eps = (seconds > 0) ? (errors - endpoint.lastErrors) / seconds : 0;
			endpoint.lastAnswers = answers;
			endpoint.lastErrors = errors;
			endpoint.load.update(this.settings.weights(), qps, eps, now);
			weights[i] = endpoint.load.current(this.settings.weights(), now);
			endpoint.counted = weights[i] > 0;
		}
		this.endpoints.keySet().retainAll(present);
		boolean anyCounted = false;
		for (double weight : weights) {
			anyCounted |= weight > 0;
		}
		LoadWeights.balance(weights, this.settings.weights().maxWeightRatio());
		double mean = 0;
		for (double weight : weights) {
			mean += weight / n;
		}
		Map<String, Double> relative = new HashMap<>();
		for (int i = 0; i < n; i++) {
			double weight = weights[i] / mean;
			this.endpoints.get(snapshot.endpoint(i).address()).weight = weight;
			relative.put(snapshot.endpoint(i).address(), weight);
		}
		if (!anyCounted || !weighs(snapshot.settings().algorithm())) {
			lift(service);
			return;
		}
		service.balancer().loadWeights(relative);
		this.applied = true;
	}

	private void lift(ServiceView service) {
		if (this.applied) {
			service.balancer().loadWeights(Map.of());
			this.applied = false;
		}
	}

	private static boolean weighs(Algorithm algorithm) {
		return algorithm == Algorithm.ROUND_ROBIN || algorithm == Algorithm.LEAST_REQUESTS
				|| algorithm == Algorithm.POWER_OF_TWO_CHOICES;
	}

	/**
	 * The probe job: with {@code probe.path} set, a GET of it to each endpoint whose last
	 * probe is {@code probe.interval} old and over, through the service's probe client;
	 * the answer's report is read as an answer's is. One probe per endpoint at a time; an
	 * endpoint that does not answer within the interval (at most 5 s) is asked again at
	 * its next turn.
	 */
	void probe(ServiceView service) {
		String path = this.settings.probePath();
		if (!this.settings.probes() || path == null) {
			return;
		}
		Snapshot<?> snapshot = service.snapshot();
		long now = service.nanoTime();
		long interval = this.settings.probeInterval().toNanos();
		Duration timeout = Duration.ofNanos(Math.min(interval, PROBE_TIMEOUT.toNanos()));
		for (int i = 0; i < snapshot.size(); i++) {
			String address = snapshot.endpoint(i).address();
			Endpoint endpoint = endpoint(address);
			if (endpoint.probing || (endpoint.probedNanos != Long.MIN_VALUE && now - endpoint.probedNanos < interval)) {
				continue;
			}
			endpoint.probing = true;
			endpoint.probedNanos = now;
			service.probe(i, path, timeout)
				.doOnNext((headers) -> take(endpoint, headers.get(LoadReportParser.HEADER),
						headers.get(LoadReportParser.BINARY_HEADER)))
				.doFinally((signal) -> endpoint.probing = false)
				.subscribe();
		}
	}

	/**
	 * Returns how many reports were refused for a reason.
	 * @param reason the reason
	 * @return the count
	 */
	public long rejected(LoadReportParser.Rejection reason) {
		return this.rejected.get(reason).sum();
	}

	/**
	 * Returns the weight an endpoint has now, relative to the service's mean (1 the
	 * mean), as the last run of the job computed it; 1 before it ran.
	 * @param address the endpoint's {@code host:port}
	 * @return the weight
	 */
	public double weight(String address) {
		Endpoint endpoint = this.endpoints.get(address);
		return (endpoint != null) ? endpoint.weight : 1;
	}

	/**
	 * Returns the actuator's section of the service's load reports.
	 * @param snapshot the service's endpoints
	 * @param nowNanos the service's clock
	 * @return the section, or {@code null} when the service does not read reports
	 */
	public @Nullable LoadReportsReport report(Snapshot<?> snapshot, long nowNanos) {
		if (!this.settings.enabled()) {
			return null;
		}
		List<EndpointLoadReport> endpoints = new ArrayList<>(snapshot.size());
		for (int i = 0; i < snapshot.size(); i++) {
			String address = snapshot.endpoint(i).address();
			Endpoint endpoint = this.endpoints.get(address);
			LoadReport report = (endpoint != null) ? endpoint.load.latest() : null;
			if (endpoint == null || report == null) {
				endpoints.add(new EndpointLoadReport(address, null, null, null, null, null, null, Map.of(), -1,
						(endpoint != null) ? endpoint.weight : 1, false));
				continue;
			}
			endpoints.add(new EndpointLoadReport(address, report.utilization(this.settings.weights().utilization()),
					orNull(report.applicationUtilization()), orNull(report.cpuUtilization()),
					orNull(report.memUtilization()), orNull(report.rpsFractional()), orNull(report.eps()),
					new TreeMap<>(report.namedMetrics()), (nowNanos - endpoint.load.latestNanos()) / 1_000_000,
					endpoint.weight, endpoint.counted));
		}
		Map<String, Long> rejected = new TreeMap<>();
		this.rejected.forEach((reason, count) -> rejected.put(reason.tag(), count.sum()));
		return new LoadReportsReport(this.settings.weights().utilization(), weighs(snapshot.settings().algorithm()),
				rejected, endpoints);
	}

	private static @Nullable Double orNull(double value) {
		return (value == LoadReport.ABSENT) ? null : value;
	}

	@Override
	public List<Meter> register(MeterRegistry registry, String serviceId) {
		if (!this.settings.enabled()) {
			return List.of();
		}
		List<Meter> meters = new ArrayList<>(this.rejected.size());
		this.rejected.forEach((reason, count) -> meters.add(FunctionCounter.builder(REJECTED, count, LongAdder::sum)
			.tags("service", serviceId, "reason", reason.tag())
			.description("Load reports of the service's endpoints refused and ignored, by why: not a report in any "
					+ "form (unparseable), NaN or infinite (not-a-number), negative, or above its field's range")
			.register(registry)));
		return meters;
	}

	/**
	 * One endpoint's reports and counts, carried from each state of a service to the
	 * next.
	 */
	private static final class Endpoint {

		final LoadWeights.EndpointLoad load = new LoadWeights.EndpointLoad();

		final LongAdder answers = new LongAdder();

		final LongAdder errors = new LongAdder();

		// The control thread's; the report reads the last two as they are.

		long lastAnswers;

		long lastErrors;

		volatile double weight = 1;

		volatile boolean counted;

		/**
		 * When the last probe started (control thread), and whether one is on its way
		 * (cleared by the probe's end, on its event loop).
		 */
		long probedNanos = Long.MIN_VALUE;

		volatile boolean probing;

	}

}
