package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.LoadAwareSpill;
import dev.gatewaylb.internal.balance.Locality;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.internal.discovery.Member;
import org.jspecify.annotations.Nullable;

/**
 * Load-aware spill between priority levels ({@code locality.load-aware}), the
 * {@code locality-spill} job: every {@link #INTERVAL} on the control thread, each
 * service's levels' latencies over the window (the endpoints' latency sums, which the
 * request path adds to) and requests in flight are handed to the service's
 * {@link LoadAwareSpill}, and what it decides (which levels spill, what a request costs
 * in each) is handed to the balancer. The request path only adds to counters and reads
 * the decision.
 */
final class LocalitySpilling {

	/**
	 * One window.
	 */
	static final Duration INTERVAL = Duration.ofMillis(100);

	/**
	 * The fewest answers that make a level's window latency.
	 */
	static final int MIN_SAMPLES = 3;

	private final Supplier<List<ServiceRuntime>> runtimes;

	private final ControlThread control;

	private final Separately separately = new Separately("locality-spill");

	/**
	 * Each service's controller and its endpoints' last sums. Control thread only.
	 */
	private final Map<String, Service> services = new HashMap<>();

	private ControlThread.@Nullable Job job;

	LocalitySpilling(Supplier<List<ServiceRuntime>> runtimes, ControlThread control) {
		this.runtimes = runtimes;
		this.control = control;
	}

	synchronized void start() {
		if (this.job == null) {
			this.job = this.control.every("locality-spill", INTERVAL, this::evaluate);
		}
	}

	private void evaluate() {
		List<ServiceRuntime> all = this.runtimes.get();
		this.services.keySet().retainAll(all.stream().map(ServiceRuntime::id).collect(Collectors.toSet()));
		this.separately.forEach(all, ServiceRuntime::id, this::evaluate);
	}

	private void evaluate(ServiceRuntime runtime) {
		Locality locality = runtime.settings().balancer().locality();
		Snapshot<Member> snapshot = runtime.snapshot();
		List<Snapshot.Level> levels = snapshot.levels();
		if (!runtime.isBalancedHere() || !locality.enabled() || !locality.loadAware() || levels.size() < 2
				|| snapshot.isPanic() || snapshot.isFailOpen()) {
			if (this.services.remove(runtime.id()) != null) {
				runtime.balancer().load(Map.of());
			}
			return;
		}
		Service service = this.services.computeIfAbsent(runtime.id(), (id) -> new Service());
		int count = levels.size();
		int[] priorities = new int[count];
		Map<Integer, Integer> positions = new HashMap<>();
		for (int level = 0; level < count; level++) {
			priorities[level] = levels.get(level).priority();
			positions.put(priorities[level], level);
		}
		long[] samples = new long[count];
		long[] totalNanos = new long[count];
		int[] inFlight = new int[count];
		int[] taking = new int[count];
		Map<EndpointState, long[]> last = new IdentityHashMap<>();
		for (int i = 0; i < snapshot.size(); i++) {
			int level = positions.get(snapshot.priority(i));
			EndpointState state = snapshot.state(i);
			long[] now = { state.latencySamples(), state.latencyTotalNanos() };
			long[] before = service.sums.get(state);
			if (before != null) {
				samples[level] += now[0] - before[0];
				totalNanos[level] += now[1] - before[1];
			}
			last.put(state, now);
			if (snapshot.takesTraffic(i)) {
				taking[level]++;
				inFlight[level] += state.inFlight();
			}
		}
		service.sums = last;
		double[] latency = new double[count];
		double[] queue = new double[count];
		for (int level = 0; level < count; level++) {
			latency[level] = (samples[level] >= MIN_SAMPLES) ? (double) totalNanos[level] / samples[level] : Double.NaN;
			queue[level] = (taking[level] > 0) ? (double) inFlight[level] / taking[level] : Double.NaN;
		}
		Map<Integer, LoadAwareSpill.Load> loads = service.controller.next(priorities, latency, queue);
		if (!loads.equals(service.applied)) {
			service.applied = loads;
			runtime.balancer().load(loads);
		}
	}

	/**
	 * One service's controller and the sums it last read.
	 */
	private static final class Service {

		final LoadAwareSpill controller = new LoadAwareSpill();

		Map<EndpointState, long[]> sums = new IdentityHashMap<>();

		Map<Integer, LoadAwareSpill.Load> applied = Map.of();

	}

}
