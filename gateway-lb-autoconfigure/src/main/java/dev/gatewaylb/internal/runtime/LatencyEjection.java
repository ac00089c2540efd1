package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.health.LatencyOutliers;
import dev.gatewaylb.internal.health.OutlierDetection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Latency-based ejection ({@code health.passive.latency-factor}), the
 * {@code latency-ejection} job: every {@link #INTERVAL} on the control thread, each
 * service's endpoints' median latencies are held against their median
 * ({@link LatencyOutliers}), never on the request path, which only stores each sample in
 * its endpoint's ring of latest samples. An ejection goes through the same atomic cap as
 * a failure's on an event loop, and asks the balancer for a rebuild.
 */
final class LatencyEjection {

	/**
	 * How often the averages are evaluated.
	 */
	static final Duration INTERVAL = Duration.ofSeconds(1);

	private static final Log logger = LogFactory.getLog(LatencyEjection.class);

	private final Supplier<List<ServiceRuntime>> runtimes;

	private final ControlThread control;

	/**
	 * The latency windows of each service's endpoints. Control thread only.
	 */
	private final Map<String, LatencyOutliers> windows = new HashMap<>();

	private ControlThread.@Nullable Job job;

	LatencyEjection(Supplier<List<ServiceRuntime>> runtimes, ControlThread control) {
		this.runtimes = runtimes;
		this.control = control;
	}

	synchronized void start() {
		if (this.job == null) {
			this.job = EveryService.start(this.control, "latency-ejection", INTERVAL, this.runtimes,
					(runtime) -> evaluate(runtime,
							this.windows.computeIfAbsent(runtime.id(), (id) -> new LatencyOutliers())));
		}
	}

	private void evaluate(ServiceRuntime runtime, LatencyOutliers latency) {
		OutlierDetection detection = runtime.settings().health().passive();
		long now = this.control.nanoTime();
		for (EndpointState state : latency.evaluate(runtime.snapshot(), runtime.ejections(), detection, now)) {
			logger.warn("Ejected " + state.address() + " of service " + runtime.id() + " for "
					+ (state.ejectedUntilNanos() - now) / 1_000_000 + " ms: its median latency is more than "
					+ detection.latencyFactor() + " times the median of the service's endpoints, "
					+ Math.round(latency.lastMedianNanos() / 1_000) / 1000.0 + " ms");
			runtime.events().ejected(runtime.id(), state.address(), "latency");
			runtime.balancer().reevaluateLater();
		}
	}

}
