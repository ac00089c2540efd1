package dev.gatewaylb.internal.locality;

import java.time.Duration;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.actuate.GatewayLbReport.LevelReport;
import dev.gatewaylb.actuate.GatewayLbReport.LocalityReport;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.LevelSettings;
import dev.gatewaylb.internal.balance.LevelSpill;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.ServiceView;
import org.jspecify.annotations.Nullable;

/**
 * A service's localities ({@code locality}): its levels' settings, and the load-aware
 * spill between them.
 * <p>
 * The {@code locality-spill} job, every {@link #INTERVAL} on the control thread, hands
 * each service's levels' latencies over the window (the endpoints' latency sums, which
 * the request path adds to) and requests in flight to the service's {@link LevelSpill},
 * and what it decides (which levels spill, what a request costs in each) to the balancer.
 * The request path only adds to counters and reads the decision. The spill's state is the
 * control thread's alone; it starts again when the settings change.
 */
public final class LocalityState {

	/**
	 * The feature: a service's state, and the {@code locality-spill} job.
	 */
	public static final Feature<LevelSettings, LocalityState> FEATURE = new Feature<>() {

		@Override
		public Class<LocalityState> stateType() {
			return LocalityState.class;
		}

		@Override
		public LocalityState next(@Nullable LocalityState previous, LevelSettings settings, Context service) {
			if (previous != null && previous.settings.equals(settings)) {
				return previous;
			}
			// What the balancer holds is carried, so that a spill turned off is lifted.
			return new LocalityState(settings, (previous != null) ? previous.applied : null);
		}

		@Override
		public List<Job<LocalityState>> jobs() {
			return List.of(new Job<>("locality-spill", INTERVAL, LocalityState::evaluate));
		}

	};

	/**
	 * One window.
	 */
	public static final Duration INTERVAL = Duration.ofMillis(100);

	/**
	 * The fewest answers that make a level's window latency.
	 */
	static final int MIN_SAMPLES = 3;

	private final LevelSettings settings;

	// Control thread only.

	private final LevelSpill controller = new LevelSpill();

	private Map<EndpointState, long[]> sums = new IdentityHashMap<>();

	/**
	 * The loads handed to the balancer, {@code null} while none are.
	 */
	private @Nullable Map<Integer, LevelSpill.Load> applied;

	private LocalityState(LevelSettings settings, @Nullable Map<Integer, LevelSpill.Load> applied) {
		this.settings = settings;
		this.applied = applied;
	}

	/**
	 * Returns the levels' settings the state was built from.
	 * @return the settings
	 */
	public LevelSettings settings() {
		return this.settings;
	}

	private void evaluate(ServiceView service) {
		Snapshot<?> snapshot = service.snapshot();
		Balancer<?> balancer = service.balancer();
		List<Snapshot.Level> levels = snapshot.levels();
		if (!this.settings.enabled() || !this.settings.loadAware() || levels.size() < 2 || snapshot.isPanic()
				|| snapshot.isFailOpen()) {
			if (this.applied != null) {
				this.applied = null;
				this.sums = new IdentityHashMap<>();
				balancer.load(Map.of());
			}
			return;
		}
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
			long[] before = this.sums.get(state);
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
		this.sums = last;
		double[] latency = new double[count];
		double[] queue = new double[count];
		for (int level = 0; level < count; level++) {
			latency[level] = (samples[level] >= MIN_SAMPLES) ? (double) totalNanos[level] / samples[level] : Double.NaN;
			queue[level] = (taking[level] > 0) ? (double) inFlight[level] / taking[level] : Double.NaN;
		}
		Map<Integer, LevelSpill.Load> loads = this.controller.next(priorities, latency, queue);
		if (!loads.equals(this.applied)) {
			this.applied = loads;
			balancer.load(loads);
		}
	}

	/**
	 * Returns the actuator's section of the service's levels.
	 * @param snapshot the service's endpoints
	 * @return the section, or {@code null} when the service has no localities
	 */
	public @Nullable LocalityReport report(Snapshot<?> snapshot) {
		if (!this.settings.enabled()) {
			return null;
		}
		List<LevelReport> levels = snapshot.levels()
			.stream()
			.map((level) -> new LevelReport(level.priority(), level.endpoints(), level.healthy(), level.share(),
					level.spilling(), level.requests()))
			.toList();
		return new LocalityReport(this.settings.zone(), snapshot.isPanic(), this.settings.loadAware(), levels);
	}

}
