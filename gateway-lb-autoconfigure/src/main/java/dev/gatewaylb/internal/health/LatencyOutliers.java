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
 * ({@code health.passive.latency-factor}): an endpoint whose latency is more than
 * {@code latency-factor} times the median of the service's endpoints' latencies is
 * ejected like a failing one, through {@link OutlierDetection#eject}, so with the same
 * growing ejection time, the same {@code max-ejection-percent} cap and the same
 * slow-start return.
 * <p>
 * An endpoint's latency is the <b>median</b> of a window of at least
 * {@value #MIN_SAMPLES} samples taken since its last state change (joining, or the end of
 * an ejection), of its latest {@value EndpointState#LATENCY_RING} when the window holds
 * more: a window closes at the first evaluation that finds that many samples in it, and
 * its median then stands until the next window closes. So a busy endpoint's latency
 * covers the end of the last evaluation period, and a quiet one's the time it took to
 * collect the samples. A median, not a mean: a few extreme samples (one client's slow
 * queries, a GC pause) cannot move it, whereas 10% of an endpoint's requests 50 times
 * slower than the rest make its mean six times its usual latency. To move an endpoint's
 * median, slow requests must be more than half of its window. Requests that followed an
 * affinity cookie are no samples at all (the client chose their endpoint, not the
 * balancer), so a client cannot gather its slow requests on one endpoint to become that
 * half. The median of the endpoints is taken only over endpoints that are not ejected and
 * have a closed window, and only when there are at least {@value #MIN_ENDPOINTS} of them:
 * with two, "the median" is the slow one's own half.
 * <p>
 * Concurrency: {@link #evaluate} runs on the control thread only, once an evaluation
 * interval, and is the only reader and writer of the windows and of the scratch array it
 * sorts; the request path only stores each sample into its endpoint's ring with one
 * atomic increment ({@link EndpointState#copyEjectionSamples} says what a copy taken
 * while samples arrive may hold: real samples of the endpoint, a few of them just outside
 * the window) and never sorts, allocates or locks for this. The ejection itself races
 * with failure ejections on the event loops; {@link Ejections} makes the cap check and
 * the ejection one atomic step for both.
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
	 * Where a closing window's samples are copied and sorted. Control thread only.
	 */
	private final long[] scratch = new long[EndpointState.LATENCY_RING];

	/**
	 * Closes the windows that have enough samples and ejects the endpoints whose latency
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
		double[] latencies = new double[states.size()];
		int usable = 0;
		for (int i = 0; i < latencies.length; i++) {
			EndpointState state = states.get(i);
			Window window = this.windows.computeIfAbsent(state, Window::new);
			latencies[i] = window.update(state, nowNanos, this.scratch);
			if (!Double.isNaN(latencies[i])) {
				usable++;
			}
		}
		if (usable < MIN_ENDPOINTS) {
			return List.of();
		}
		this.lastMedianNanos = median(latencies);
		double threshold = detection.latencyFactor() * this.lastMedianNanos;
		List<EndpointState> ejected = new ArrayList<>(1);
		for (int i = 0; i < latencies.length; i++) {
			if (latencies[i] > threshold) {
				EndpointState state = states.get(i);
				if (detection.eject(state, snapshot, ejections, nowNanos)) {
					// Marks the window ejected: samples of requests still in flight are
					// dropped, and a fresh window starts on its return.
					this.windows.get(state).update(state, nowNanos, this.scratch);
					ejected.add(state);
				}
			}
		}
		return ejected;
	}

	/**
	 * Returns the latency (the median of its samples) of the window that last closed for
	 * {@code endpoint}, for tests.
	 * @param endpoint the endpoint's state
	 * @return nanoseconds, or NaN when none is usable
	 */
	public double latency(EndpointState endpoint) {
		Window window = this.windows.get(endpoint);
		return (window != null) ? window.latency : Double.NaN;
	}

	/**
	 * Returns the median of the endpoints' latencies the last evaluation with enough
	 * endpoints found.
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
	 * Sorts the first {@code count} values in place and returns their median.
	 * @param values the values, the first {@code count} of them sorted on return
	 * @param count how many, at least 1
	 * @return the median, the mean of the two middle values for an even count
	 */
	static double median(long[] values, int count) {
		Arrays.sort(values, 0, count);
		return (count % 2 == 1) ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2.0;
	}

	/**
	 * One endpoint's current window, as the control thread keeps it.
	 */
	private static final class Window {

		/**
		 * The number of the window's first sample.
		 */
		private long base;

		private double latency = Double.NaN;

		private boolean ejected;

		/**
		 * A new window counts the samples since the endpoint joined.
		 */
		Window(EndpointState state) {
		}

		/**
		 * Closes the window if it holds enough samples, and returns the latency that
		 * stands, or NaN while the endpoint is ejected or has no closed window since its
		 * last state change.
		 */
		double update(EndpointState state, long nowNanos, long[] scratch) {
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
			long count = state.ejectionSamples();
			if (count - this.base >= MIN_SAMPLES) {
				int copied = state.copyEjectionSamples(this.base, count, scratch);
				if (copied > 0) {
					this.latency = median(scratch, copied);
				}
				this.base = count;
			}
			return this.latency;
		}

		void restart(EndpointState state) {
			this.base = state.ejectionSamples();
			this.latency = Double.NaN;
		}

	}

}
