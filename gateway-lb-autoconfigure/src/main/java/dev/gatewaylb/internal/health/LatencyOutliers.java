package dev.gatewaylb.internal.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;

/**
 * Latency-based ejection of one service's endpoints
 * ({@code health.passive.latency-factor}): an endpoint whose latency average is more than
 * {@code latency-factor} times the median of the service's endpoints' averages is ejected
 * like a failing one, through {@link OutlierDetection#eject}, so with the same growing
 * ejection time, the same {@code max-ejection-percent} cap and the same slow-start
 * return.
 * <p>
 * An endpoint's average is the plain mean of a window of at least {@value #MIN_SAMPLES}
 * samples taken since its last state change (joining, or the end of an ejection): a
 * window closes at the first evaluation that finds that many samples in it, and its mean
 * then stands until the next window closes. So a busy endpoint's average covers the last
 * evaluation period, and a quiet one's the time it took to collect the samples. The
 * median is taken only over endpoints that are not ejected and have a closed window, and
 * only when there are at least {@value #MIN_ENDPOINTS} of them: with two, "the median" is
 * the slow one's own half.
 * <p>
 * Concurrency: {@link #evaluate} runs on the control thread only, once an evaluation
 * interval, and is the only reader and writer of the windows; the request path only adds
 * to each endpoint's two sums ({@link EndpointState#latencySamples()},
 * {@link EndpointState#latencyTotalNanos()}) and never sorts, allocates or locks for
 * this. The two sums are read one after the other, not as one snapshot, so a sample that
 * lands in between is counted in one and not yet in the other: an error of one sample in
 * a window of {@value #MIN_SAMPLES} or more, and the next window gets it. The ejection
 * itself races with failure ejections on the event loops; {@link Ejections} makes the cap
 * check and the ejection one atomic step for both.
 */
public final class LatencyOutliers {

	/**
	 * Samples an endpoint needs in a window before its average counts.
	 */
	public static final int MIN_SAMPLES = 20;

	/**
	 * Endpoints with a usable average the median needs.
	 */
	public static final int MIN_ENDPOINTS = 3;

	private final Map<EndpointState, Window> windows = new IdentityHashMap<>();

	private double lastMedianNanos = Double.NaN;

	/**
	 * Closes the windows that have enough samples and ejects the endpoints whose average
	 * is an outlier. Runs on the control thread only.
	 * @param snapshot the service's current endpoints
	 * @param ejections the ejections of that set
	 * @param detection the service's passive health settings
	 * @param nowNanos the balancer clock's current time
	 * @return the endpoints this call ejected
	 */
	public List<EndpointState> evaluate(Snapshot<?> snapshot, Ejections ejections, OutlierDetection detection,
			long nowNanos) {
		if (!detection.ejectsSlowEndpoints()) {
			this.windows.clear();
			return List.of();
		}
		// Endpoints that left discovery are forgotten; a new state is a new endpoint.
		List<EndpointState> states = new ArrayList<>(snapshot.size());
		for (int i = 0; i < snapshot.size(); i++) {
			states.add(snapshot.state(i));
		}
		this.windows.keySet().retainAll(states);
		double[] means = new double[states.size()];
		int usable = 0;
		for (int i = 0; i < means.length; i++) {
			EndpointState state = states.get(i);
			Window window = this.windows.computeIfAbsent(state, Window::new);
			means[i] = window.update(state, nowNanos);
			if (!Double.isNaN(means[i])) {
				usable++;
			}
		}
		if (usable < MIN_ENDPOINTS) {
			return List.of();
		}
		this.lastMedianNanos = median(means);
		double threshold = detection.latencyFactor() * this.lastMedianNanos;
		List<EndpointState> ejected = new ArrayList<>(1);
		for (int i = 0; i < means.length; i++) {
			if (means[i] > threshold) {
				EndpointState state = states.get(i);
				if (detection.eject(state, snapshot, ejections, nowNanos)) {
					// Marks the window ejected: samples of requests still in flight are
					// dropped, and a fresh window starts on its return.
					this.windows.get(state).update(state, nowNanos);
					ejected.add(state);
				}
			}
		}
		return ejected;
	}

	/**
	 * Returns the average of the window that last closed for {@code endpoint}, for the
	 * actuator and tests.
	 * @param endpoint the endpoint's state
	 * @return nanoseconds, or NaN when none is usable
	 */
	public double average(EndpointState endpoint) {
		Window window = this.windows.get(endpoint);
		return (window != null) ? window.mean : Double.NaN;
	}

	/**
	 * Returns the median the last evaluation with enough endpoints found.
	 * @return nanoseconds, or NaN before the first
	 */
	public double lastMedianNanos() {
		return this.lastMedianNanos;
	}

	/**
	 * Returns the median of the values that are not NaN; NaN when there are none.
	 * @param values the values, left as they are
	 * @return the median, the mean of the two middle values for an even count
	 */
	static double median(double[] values) {
		double[] sorted = Arrays.stream(values).filter((value) -> !Double.isNaN(value)).sorted().toArray();
		int n = sorted.length;
		if (n == 0) {
			return Double.NaN;
		}
		return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	}

	/**
	 * One endpoint's current window, as the control thread keeps it.
	 */
	private static final class Window {

		private long baseSamples;

		private long baseTotalNanos;

		private double mean = Double.NaN;

		private boolean ejected;

		/**
		 * A new window counts the samples since the endpoint joined.
		 */
		Window(EndpointState state) {
		}

		/**
		 * Closes the window if it holds enough samples, and returns the average that
		 * stands, or NaN while the endpoint is ejected or has no closed window since its
		 * last state change.
		 */
		double update(EndpointState state, long nowNanos) {
			if (state.isEjected(nowNanos)) {
				// Ejected (for failures or latency): what its last requests took says
				// nothing about how it serves after its return.
				this.ejected = true;
				restart(state);
				return Double.NaN;
			}
			if (this.ejected) {
				this.ejected = false;
				restart(state);
			}
			long samples = state.latencySamples() - this.baseSamples;
			if (samples >= MIN_SAMPLES) {
				long total = state.latencyTotalNanos();
				this.mean = (double) (total - this.baseTotalNanos) / samples;
				this.baseSamples += samples;
				this.baseTotalNanos = total;
			}
			return this.mean;
		}

		void restart(EndpointState state) {
			this.baseSamples = state.latencySamples();
			this.baseTotalNanos = state.latencyTotalNanos();
			this.mean = Double.NaN;
		}

	}

}
