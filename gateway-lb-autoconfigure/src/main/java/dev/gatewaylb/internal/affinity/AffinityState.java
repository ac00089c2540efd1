package dev.gatewaylb.internal.affinity;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.actuate.GatewayLbReport.AffinityReport;
import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.Metered;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * A service's endpoint affinity ({@code affinity}): the signer and checker of its cookie
 * values ({@code null} while the service has none), what became of its requests'
 * affinity, and the requests each endpoint got by its cookie over the last minute. The
 * signer carries over while the settings do (it holds each event loop's MACs); the counts
 * and windows always do.
 * <p>
 * Thread-safe without a lock on the request path: the counts are {@link LongAdder}s, an
 * endpoint's window is found in a concurrent map by its state (identity) and made there
 * once, and only the control thread rolls the windows.
 */
public final class AffinityState implements Metered {

	/**
	 * The feature: a service's state, and the {@code affinity-window} job that moves the
	 * followed windows on every {@link #WINDOW_STEP}, so that the actuator shows each
	 * endpoint's followed requests of the last minute, and which draining endpoints still
	 * receive sessions, without the request path keeping time.
	 */
	public static final Feature<AffinitySettings, AffinityState> FEATURE = new Feature<>() {

		@Override
		public Class<AffinityState> stateType() {
			return AffinityState.class;
		}

		@Override
		public AffinityState next(@Nullable AffinityState previous, AffinitySettings settings, Context service) {
			if (previous != null && previous.settings.equals(settings)) {
				return previous;
			}
			EndpointCookie signer = settings.enabled() ? settings.signerFor(service.serviceId(), service.wallMillis())
					: null;
			return (previous != null) ? new AffinityState(settings, signer, previous.outcomes, previous.windows)
					: new AffinityState(settings, signer, outcomes(), new ConcurrentHashMap<>());
		}

		@Override
		public List<Job<AffinityState>> jobs() {
			return List
				.of(new Job<>("affinity-window", WINDOW_STEP, (state, service) -> state.roll(service.snapshot())));
		}

	};

	/**
	 * One slot of the followed window.
	 */
	public static final Duration WINDOW_STEP = Duration.ofSeconds(5);

	/**
	 * The slots of a minute.
	 */
	static final int SLOTS = 12;

	static final String AFFINITY = "gateway.lb.affinity";

	private final AffinitySettings settings;

	private final @Nullable EndpointCookie signer;

	private final Map<AffinityOutcome, LongAdder> outcomes;

	private final ConcurrentHashMap<EndpointState, FollowedWindow> windows;

	private AffinityState(AffinitySettings settings, @Nullable EndpointCookie signer,
			Map<AffinityOutcome, LongAdder> outcomes, ConcurrentHashMap<EndpointState, FollowedWindow> windows) {
		this.settings = settings;
		this.signer = signer;
		this.outcomes = outcomes;
		this.windows = windows;
	}

	private static Map<AffinityOutcome, LongAdder> outcomes() {
		Map<AffinityOutcome, LongAdder> outcomes = new EnumMap<>(AffinityOutcome.class);
		for (AffinityOutcome outcome : AffinityOutcome.values()) {
			outcomes.put(outcome, new LongAdder());
		}
		return Collections.unmodifiableMap(outcomes);
	}

	/**
	 * Returns the settings the state was built from.
	 * @return the settings
	 */
	public AffinitySettings settings() {
		return this.settings;
	}

	/**
	 * Returns the signer and checker of the service's cookie values, made for this
	 * service's id.
	 * @return the signer, or {@code null} when the service has no endpoint affinity
	 */
	public @Nullable EndpointCookie signer() {
		return this.signer;
	}

	/**
	 * Returns the counter of one outcome.
	 * @param outcome the outcome
	 * @return its counter
	 */
	public LongAdder outcome(AffinityOutcome outcome) {
		return this.outcomes.get(outcome);
	}

	/**
	 * Counts a request that followed its cookie to an endpoint.
	 * @param endpoint the endpoint's state
	 */
	void followed(EndpointState endpoint) {
		// Made once per endpoint, on the first follow or the first roll.
		this.windows.computeIfAbsent(endpoint, (key) -> new FollowedWindow(SLOTS)).followed();
	}

	/**
	 * Returns the requests that followed a cookie to an endpoint over the last minute.
	 * @param endpoint the endpoint's state
	 * @return the count, 0 for an endpoint no request followed
	 */
	public long followedLastMinute(EndpointState endpoint) {
		FollowedWindow window = this.windows.get(endpoint);
		return (window != null) ? window.lastWindow() : 0;
	}

	/**
	 * Moves every endpoint's window on by a slot, and forgets the windows of endpoints
	 * that left. Control thread.
	 */
	void roll(Snapshot<?> snapshot) {
		if (this.signer == null) {
			return;
		}
		Set<EndpointState> present = Collections.newSetFromMap(new IdentityHashMap<>());
		for (int i = 0; i < snapshot.size(); i++) {
			EndpointState endpoint = snapshot.state(i);
			present.add(endpoint);
			this.windows.computeIfAbsent(endpoint, (key) -> new FollowedWindow(SLOTS)).roll();
		}
		this.windows.keySet().retainAll(present);
	}

	/**
	 * Returns the actuator's section of the service's affinity.
	 * @param snapshot the service's endpoints
	 * @return the section, or {@code null} when the service has no endpoint affinity
	 */
	public @Nullable AffinityReport report(Snapshot<?> snapshot) {
		if (!this.settings.enabled()) {
			return null;
		}
		List<String> drainingWithSessions = new ArrayList<>();
		for (int i = 0; i < snapshot.size(); i++) {
			if (snapshot.isDraining(i) && followedLastMinute(snapshot.state(i)) > 0) {
				drainingWithSessions.add(snapshot.endpoint(i).address());
			}
		}
		return new AffinityReport(this.settings.cookie().name(), this.settings.learn(),
				outcome(AffinityOutcome.FOLLOWED).sum(), outcome(AffinityOutcome.NEW).sum(),
				outcome(AffinityOutcome.MOVED).sum(), outcome(AffinityOutcome.REJECTED).sum(),
				List.copyOf(drainingWithSessions));
	}

	@Override
	public List<Meter> register(MeterRegistry registry, String serviceId) {
		if (this.signer == null) {
			return List.of();
		}
		List<Meter> meters = new ArrayList<>(4);
		this.outcomes.forEach((outcome, count) -> meters.add(FunctionCounter.builder(AFFINITY, count, LongAdder::sum)
			.tags("service", serviceId, "outcome", outcome.tag())
			.description("Requests of a service with endpoint affinity, by what became of their affinity cookie: "
					+ "followed to its endpoint, new, moved to another endpoint, or rejected as not signed here")
			.register(registry)));
		return meters;
	}

}
