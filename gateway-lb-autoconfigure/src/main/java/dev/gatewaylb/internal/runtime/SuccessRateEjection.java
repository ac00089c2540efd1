package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.health.OutlierDetection;
import dev.gatewaylb.internal.health.SuccessRateOutliers;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Success-rate and failure-percentage ejection ({@code health.passive.success-rate},
 * {@code health.passive.failure-percentage}), the {@code success-rate-ejection} job: on
 * the control thread, once each service's {@code success-rate.interval}, the answers and
 * failures each endpoint counted in the interval are judged
 * ({@link SuccessRateOutliers}), and an outlier is ejected through the same atomic cap as
 * a failure streak's, with the same growing ejection time and slow-start return. The
 * request path only adds to each endpoint's two sums, and only while one of the rules is
 * on.
 * <p>
 * Each interval starts from the sums as the last judgement read them; an endpoint that is
 * ejected is left out of the interval (the answers of its last requests in flight say
 * nothing of how it serves after its return), and one that joins starts from zero.
 */
final class SuccessRateEjection {

	/**
	 * How often the job looks for services whose interval has passed.
	 */
	static final Duration TICK = Duration.ofSeconds(1);

	private static final Log logger = LogFactory.getLog(SuccessRateEjection.class);

	private final Supplier<List<ServiceRuntime>> runtimes;

	private final ControlThread control;

	/**
	 * Each service's interval: when it started and the sums it started from. Control
	 * thread only.
	 */
	private final Map<String, Interval> intervals = new HashMap<>();

	private ControlThread.@Nullable Job job;

	SuccessRateEjection(Supplier<List<ServiceRuntime>> runtimes, ControlThread control) {
		this.runtimes = runtimes;
		this.control = control;
	}

	synchronized void start() {
		if (this.job == null) {
			this.job = EveryService.start(this.control, "success-rate-ejection", TICK, this.runtimes, this::evaluate);
		}
	}

	private void evaluate(ServiceRuntime runtime) {
		long now = this.control.nanoTime();
		OutlierDetection detection = runtime.settings().health().passive();
		if (!detection.countsAnswers()) {
			this.intervals.remove(runtime.id());
			return;
		}
		// A service seen for the first time starts its interval from the sums as they
		// are, so that its first judgement already has an interval's counts.
		Interval interval = this.intervals.computeIfAbsent(runtime.id(), (id) -> new Interval(now, runtime.snapshot()));
		// Due within half a tick: the job's runs drift a little, and an interval of one
		// tick would otherwise be judged every other tick.
		if (now - interval.startNanos + TICK.toNanos() / 2 >= detection.successRate().intervalNanos()) {
			judge(runtime, detection, interval, now);
		}
	}

	private void judge(ServiceRuntime runtime, OutlierDetection detection, Interval interval, long now) {
		Snapshot<?> snapshot = runtime.snapshot();
		int n = snapshot.size();
		long[] answers = new long[n];
		long[] failures = new long[n];
		Map<EndpointState, long[]> bases = new IdentityHashMap<>(n);
		for (int i = 0; i < n; i++) {
			EndpointState state = snapshot.state(i);
			long[] counted = sums(state);
			long[] base = interval.bases.get(state);
			if (base != null && !state.isEjected(now)) {
				answers[i] = counted[0] - base[0];
				failures[i] = counted[1] - base[1];
			}
			bases.put(state, counted);
		}
		// Endpoints that left are forgotten with the old map.
		interval.bases = bases;
		interval.startNanos = now;
		OutlierDetection.SuccessRate rate = detection.successRate();
		OutlierDetection.FailurePercentage percentage = detection.failurePercentage();
		boolean[] byRate = rate.enabled() ? SuccessRateOutliers.successRateOutliers(answers, failures,
				rate.stdevFactor(), rate.minimumHosts(), rate.requestVolume(), rate.confidence()) : new boolean[n];
		boolean[] byPercentage = percentage.enabled() ? SuccessRateOutliers.failurePercentageOutliers(answers, failures,
				percentage.thresholdPercent(), percentage.minimumHosts(), percentage.requestVolume()) : new boolean[n];
		boolean ejected = false;
		for (int i = 0; i < n; i++) {
			EndpointState state = snapshot.state(i);
			state.lastSuccessRate((answers[i] >= rate.requestVolume() && answers[i] > 0)
					? SuccessRateOutliers.successRate(answers[i], failures[i]) : Double.NaN);
			if ((byRate[i] || byPercentage[i]) && detection.eject(state, snapshot, runtime.ejections(), now)) {
				ejected = true;
				logger.warn("Ejected " + state.address() + " of service " + runtime.id() + " for "
						+ (state.ejectedUntilNanos() - now) / 1_000_000 + " ms: " + failures[i] + " failures in "
						+ answers[i] + " answers of the last interval, "
						+ (byRate[i] ? "a success rate below the service's endpoints'"
								: "at least " + percentage.thresholdPercent() + "% failures"));
				runtime.events().ejected(runtime.id(), state.address(), "success-rate");
			}
		}
		if (ejected) {
			runtime.balancer().reevaluateLater();
		}
	}

	/**
	 * An endpoint's answers and failures counted so far.
	 */
	private static long[] sums(EndpointState state) {
		return new long[] { state.answers(), state.failedAnswers() };
	}

	/**
	 * One service's interval.
	 */
	private static final class Interval {

		long startNanos;

		Map<EndpointState, long[]> bases = new IdentityHashMap<>();

		Interval(long startNanos, Snapshot<?> snapshot) {
			this.startNanos = startNanos;
			for (int i = 0; i < snapshot.size(); i++) {
				EndpointState state = snapshot.state(i);
				this.bases.put(state, sums(state));
			}
		}

	}

}
