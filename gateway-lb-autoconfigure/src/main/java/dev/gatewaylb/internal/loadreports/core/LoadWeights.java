package dev.gatewaylb.internal.loadreports.core;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

/**
 * Endpoint weights from the endpoints' own reports, as gRPC's weighted round-robin
 * derives them (gRFC A58): {@code qps / (utilization + eps / qps x penalty)}, where the
 * utilization is the mean of the reports since the last update (gRPC takes the latest
 * alone), recomputed on the control thread (every second), never per request.
 * <p>
 * An endpoint's weight counts only after it has reported a usable load for
 * {@code blackout-period} (so that one early report of an endpoint that just started does
 * not decide), and stops counting once its last usable report is older than
 * {@code weight-expiration-period}; until then, and when it reports nothing usable, it
 * takes the mean weight of the endpoints that have one. No weight exceeds
 * {@code max-weight-ratio} times the mean of the others', so an endpoint that reports a
 * tiny utilization cannot draw the whole service.
 */
public final class LoadWeights {

	private LoadWeights() {
	}

	/**
	 * A service's {@code load-reports} settings, as the weights read them.
	 *
	 * @param utilization the fields that count as utilization, in order
	 * @param blackoutNanos {@code blackout-period}
	 * @param expirationNanos {@code weight-expiration-period}
	 * @param errorUtilizationPenalty {@code error-utilization-penalty}
	 * @param maxWeightRatio {@code max-weight-ratio}
	 */
	public record Settings(List<String> utilization, long blackoutNanos, long expirationNanos,
			double errorUtilizationPenalty, double maxWeightRatio) {

		public Settings {
			utilization = List.copyOf(utilization);
		}

	}

	/**
	 * Returns the weight a report gives, 0 when it gives none (no queries, or neither a
	 * utilization nor errors): A58's formula, the reported {@code rps_fractional} and
	 * {@code eps} when the report has a rate, else the gateway's own counts of the
	 * endpoint's answers and errors.
	 * @param report the report
	 * @param settings the settings
	 * @param ownQps the endpoint's answers per second, as the gateway counted them
	 * @param ownEps its errors per second, as the gateway counted them
	 * @return the weight, or 0
	 */
	public static double weight(LoadReport report, Settings settings, double ownQps, double ownEps) {
		return weight(report, report.utilization(settings.utilization()), settings, ownQps, ownEps);
	}

	/**
	 * Returns the weight a report gives with a utilization other than its own: the mean
	 * of the reports since the last update ({@link EndpointLoad#update}).
	 * @param report the latest report, for its rate
	 * @param utilization the utilization, 0 for none
	 * @param settings the settings
	 * @param ownQps the endpoint's answers per second, as the gateway counted them
	 * @param ownEps its errors per second, as the gateway counted them
	 * @return the weight, or 0
	 */
	static double weight(LoadReport report, double utilization, Settings settings, double ownQps, double ownEps) {
		boolean reportedRate = report.rpsFractional() > 0;
		double qps = reportedRate ? report.rpsFractional() : ownQps;
		double eps = reportedRate ? Math.max(report.eps(), 0) : ownEps;
		if (qps <= 0) {
			return 0;
		}
		double penalty = eps / qps * settings.errorUtilizationPenalty();
		if (utilization <= 0 && penalty <= 0) {
			return 0;
		}
		// No utilization but errors: weighed by its errors alone. gRPC gives such an
		// endpoint the mean weight; an endpoint that fails half its requests would so
		// draw as much as a healthy one by reporting nothing.
		return qps / (Math.max(utilization, 0) + penalty);
	}

	/**
	 * Fills the weights an update computed in place: an endpoint without one (0) takes
	 * the mean of those with one; then none exceeds {@code maxWeightRatio} times the mean
	 * of the others'. With none known, all are 1: plain round-robin.
	 * @param weights each endpoint's weight from its reports, 0 for none; filled in place
	 * @param maxWeightRatio {@code max-weight-ratio}
	 */
	public static void balance(double[] weights, double maxWeightRatio) {
		int n = weights.length;
		double sum = 0;
		int known = 0;
		for (double weight : weights) {
			if (weight > 0) {
				sum += weight;
				known++;
			}
		}
		if (known == 0) {
			java.util.Arrays.fill(weights, 1);
			return;
		}
		double mean = sum / known;
		for (int i = 0; i < n; i++) {
			if (!(weights[i] > 0)) {
				weights[i] = mean;
			}
		}
		if (n < 2) {
			return;
		}
		double total = 0;
		for (double weight : weights) {
			total += weight;
		}
		// Each against the others as they were: capping one does not lower another's cap.
		double[] caps = new double[n];
		for (int i = 0; i < n; i++) {
			caps[i] = maxWeightRatio * (total - weights[i]) / (n - 1);
		}
		for (int i = 0; i < n; i++) {
			weights[i] = Math.min(weights[i], caps[i]);
		}
	}

	/**
	 * One endpoint's reports and the weight they give. The event loops publish the latest
	 * report ({@link #reported}); the control thread alone updates the weight
	 * ({@link #update}) and reads it ({@link #current}).
	 */
	public static final class EndpointLoad {

		private static final long NEVER = Long.MIN_VALUE;

		/**
		 * The latest report, and when it came: two volatile writes, not one pair. A
		 * reader that sees a new report with the time of the one before misdates it by
		 * one answer's gap, which no period here can tell.
		 */
		private volatile @Nullable LoadReport latest;

		private volatile long latestNanos;

		/**
		 * The usable utilizations reported since the last update, summed and counted. The
		 * update reads and resets each; a report added between the two resets is counted
		 * in one update and not the other, one report's error in a second's mean.
		 */
		private final DoubleAdder utilizationSum = new DoubleAdder();

		private final LongAdder utilizations = new LongAdder();

		// The control thread's.

		private long appliedNanos = Long.MIN_VALUE;

		/**
		 * Since when the endpoint has reported a usable load without a gap, or
		 * {@link #NEVER}.
		 */
		private long nonEmptySinceNanos = NEVER;

		private long lastUpdatedNanos;

		private double weight;

		/**
		 * Publishes a report that came with an answer. Any thread.
		 * @param report the report
		 * @param nowNanos the clock's time
		 */
		public void reported(LoadReport report, long nowNanos) {
			this.latest = Objects.requireNonNull(report, "report");
			this.latestNanos = nowNanos;
		}

		/**
		 * Publishes a report that came with an answer, and adds its utilization to the
		 * mean the next update weighs by. Any thread; no allocation.
		 * @param report the report
		 * @param utilization the fields that count as utilization, in order
		 * @param nowNanos the clock's time
		 */
		public void reported(LoadReport report, List<String> utilization, long nowNanos) {
			double value = report.utilization(utilization);
			if (value > 0) {
				this.utilizationSum.add(value);
				this.utilizations.increment();
			}
			reported(report, nowNanos);
		}

		/**
		 * Returns the latest report, or {@code null} before the first.
		 */
		public @Nullable LoadReport latest() {
			return this.latest;
		}

		/**
		 * Returns when the latest report came.
		 */
		public long latestNanos() {
			return this.latestNanos;
		}

		/**
		 * Takes the latest report into the weight, if it is new. Control thread.
		 * @param settings the settings
		 * @param ownQps the endpoint's answers per second, as the gateway counted them
		 * @param ownEps its errors per second, as the gateway counted them
		 * @param nowNanos the clock's time
		 */
		public void update(Settings settings, double ownQps, double ownEps, long nowNanos) {
			LoadReport report = this.latest;
			long at = this.latestNanos;
			if (report == null || at == this.appliedNanos) {
				return;
			}
			this.appliedNanos = at;
			// The mean of the reports since the last update, when they came through
			// reported(report, utilization, now): the latest alone, as gRPC weighs,
			// swings
			// with every answer of a backend that reports its busy workers (a backend of
			// two reports 0.5 or 1.0, nothing between), and a weight that doubles at
			// random for a second queues it.
			long count = this.utilizations.sumThenReset();
			double sum = this.utilizationSum.sumThenReset();
			double utilization = (count > 0) ? sum / count : report.utilization(settings.utilization());
			double weight = LoadWeights.weight(report, utilization, settings, ownQps, ownEps);
			if (weight <= 0) {
				// Nothing usable: the blackout starts again with the next usable report.
				this.weight = 0;
				this.nonEmptySinceNanos = NEVER;
				return;
			}
			if (this.nonEmptySinceNanos == NEVER) {
				this.nonEmptySinceNanos = nowNanos;
			}
			this.lastUpdatedNanos = nowNanos;
			this.weight = weight;
		}

		/**
		 * Returns the weight that counts now, 0 while in blackout, expired or without a
		 * usable report. Control thread.
		 * @param settings the settings
		 * @param nowNanos the clock's time
		 * @return the weight, or 0
		 */
		public double current(Settings settings, long nowNanos) {
			if (this.weight <= 0) {
				return 0;
			}
			if (nowNanos - this.lastUpdatedNanos >= settings.expirationNanos()) {
				// Expired: counted again only after a new blackout.
				this.nonEmptySinceNanos = NEVER;
				this.weight = 0;
				return 0;
			}
			if (settings.blackoutNanos() > 0 && nowNanos - this.nonEmptySinceNanos < settings.blackoutNanos()) {
				return 0;
			}
			return this.weight;
		}

	}

}
