package dev.gatewaylb.internal.overload;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.actuate.GatewayLbReport.ConcurrencyReport;
import dev.gatewaylb.actuate.GatewayLbReport.PartitionReport;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.Metered;
import dev.gatewaylb.internal.overload.core.ConcurrencyLimits;
import dev.gatewaylb.internal.overload.core.EndpointLimiter;
import dev.gatewaylb.internal.overload.core.LimitSamples;
import dev.gatewaylb.internal.overload.core.Partitions;
import dev.gatewaylb.internal.request.HashKey;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * A service's overload protection ({@code concurrency}): its endpoints' limiters and the
 * samples the request path feeds them, the partitions of its limit (with the requests
 * waiting for a place), and the requests it shed.
 * <p>
 * The {@code concurrency-limits} job, every {@link #TICK} on the control thread, closes
 * each endpoint's sample window and lets its limiter set its limit
 * ({@link EndpointLimiter}), and publishes the service's limit (the sum of its
 * endpoints') for the partitions. The request path only adds samples and reads the limit
 * a pick compares with the endpoint's requests in flight. A service's limiters live as
 * long as its limits do not change: a refresh that changes {@code concurrency.*} starts
 * every endpoint again from {@code initial-limit}, one that turns limits off lifts them
 * at once, and an endpoint that joins gets a limiter of its own.
 * <p>
 * Thread-safe without a lock on the request path: the samples of an endpoint are found in
 * a concurrent map by its state (identity) and made there once; the limiters are the
 * control thread's alone.
 */
public final class OverloadState implements Metered {

	/**
	 * The feature: a service's state, and the {@code concurrency-limits} job.
	 */
	public static final Feature<ConcurrencySettings, OverloadState> FEATURE = new Feature<>() {

		@Override
		public Class<OverloadState> stateType() {
			return OverloadState.class;
		}

		@Override
		public OverloadState next(@Nullable OverloadState previous, ConcurrencySettings settings, Context service) {
			if (previous == null) {
				return new OverloadState(settings, Partitions.of(settings.partitions()), new LongAdder());
			}
			if (previous.settings.equals(settings)) {
				return previous;
			}
			if (!settings.limits().enabled()) {
				// Turned off: the endpoints are unlimited from now on.
				previous.lift();
			}
			// The partitions' counts carry over while their shares do: requests in flight
			// release into the counters they were counted in.
			Partitions partitions = settings.partitions().equals(previous.partitions.configured()) ? previous.partitions
					: Partitions.of(settings.partitions());
			OverloadState next = new OverloadState(settings, partitions, previous.shed);
			if (settings.limits().equals(previous.settings.limits())) {
				next.limiters = previous.limiters;
				next.samples = previous.samples;
			}
			else if (!settings.limits().enabled()) {
				partitions.serviceLimit(0);
			}
			return next;
		}

		@Override
		public List<Job<OverloadState>> jobs() {
			return List.of(new Job<>("concurrency-limits", TICK,
					(state, service) -> state.update(service.snapshot(), service.nanoTime())));
		}

	};

	/**
	 * How often windows are looked at: a tenth of the longest window, so that a window
	 * that fills in less closes soon after.
	 */
	public static final Duration TICK = Duration.ofMillis(100);

	static final String REJECTED = "gateway.lb.rejected";

	private final ConcurrencySettings settings;

	private final Partitions partitions;

	private final LongAdder shed;

	/**
	 * Each endpoint's samples, added to by the request path.
	 */
	private ConcurrentHashMap<EndpointState, LimitSamples> samples = new ConcurrentHashMap<>();

	/**
	 * Each endpoint's limiter. Control thread only.
	 */
	private Map<EndpointState, EndpointLimiter> limiters = new IdentityHashMap<>();

	private OverloadState(ConcurrencySettings settings, Partitions partitions, LongAdder shed) {
		this.settings = settings;
		this.partitions = partitions;
		this.shed = shed;
	}

	/**
	 * Returns the settings the state was built from.
	 * @return the settings
	 */
	public ConcurrencySettings settings() {
		return this.settings;
	}

	/**
	 * Returns whether the service's endpoints are limited, so that attempts add samples.
	 * @return whether limited
	 */
	public boolean limits() {
		return this.settings.limits().enabled();
	}

	/**
	 * Returns the partitions of the service's limit: its own, even without shares (one,
	 * the rest), so that no two services share counts or waiters.
	 * @return the partitions
	 */
	public Partitions partitions() {
		return this.partitions;
	}

	/**
	 * Returns the count of requests shed because every endpoint was at its limit.
	 * @return the counter
	 */
	public LongAdder shed() {
		return this.shed;
	}

	/**
	 * Adds a sample for an endpoint's limiter.
	 * @param endpoint the endpoint's state
	 * @param rttNanos the time to the response headers, or negative when the attempt
	 * failed before it was sent
	 * @param dropped whether the endpoint failed the request
	 */
	public void sample(EndpointState endpoint, long rttNanos, boolean dropped) {
		// Made once per endpoint, on its first sample or the job's first look.
		samples(endpoint).add(rttNanos, dropped, endpoint.inFlight());
	}

	/**
	 * Returns an endpoint's samples, made if the endpoint has none yet.
	 * @param endpoint the endpoint's state
	 * @return its samples
	 */
	public LimitSamples samples(EndpointState endpoint) {
		return this.samples.computeIfAbsent(endpoint, (key) -> new LimitSamples());
	}

	/**
	 * Updates the limiter of every endpoint, and forgets those of endpoints that left.
	 * Control thread.
	 */
	void update(Snapshot<?> snapshot, long nowNanos) {
		ConcurrencyLimits limits = this.settings.limits();
		if (!limits.enabled()) {
			return;
		}
		Map<EndpointState, EndpointLimiter> next = new IdentityHashMap<>(snapshot.size());
		long sum = 0;
		for (int i = 0; i < snapshot.size(); i++) {
			EndpointState state = snapshot.state(i);
			LimitSamples window = samples(state);
			EndpointLimiter limiter = this.limiters.get(state);
			if (limiter == null) {
				limiter = new EndpointLimiter(limits, window, state, nowNanos);
			}
			next.put(state, limiter);
			int limit = limiter.update(window, state, nowNanos);
			if (!snapshot.isDraining(i) && snapshot.endpoint(i).weight() > 0) {
				sum += limit;
			}
		}
		this.limiters = next;
		this.samples.keySet().retainAll(next.keySet());
		this.partitions.serviceLimit(sum);
	}

	/**
	 * Gives every endpoint its requests back unlimited. Control thread.
	 */
	private void lift() {
		this.limiters.keySet().forEach((state) -> state.concurrencyLimit(EndpointState.UNLIMITED));
		this.limiters = new IdentityHashMap<>();
	}

	/**
	 * Returns the actuator's section of the service's limits.
	 * @return the section, or {@code null} when the service limits nothing
	 */
	public @Nullable ConcurrencyReport report() {
		ConcurrencyLimits limits = this.settings.limits();
		if (!limits.enabled()) {
			return null;
		}
		List<PartitionReport> partitions = new ArrayList<>();
		if (this.settings.partitioned()) {
			this.partitions.report()
				.forEach((partition) -> partitions.add(new PartitionReport(partition.name(), partition.share(),
						partition.guaranteed(), partition.inFlight(), partition.waiting())));
		}
		HashKey partitionBy = this.settings.partitionBy();
		return new ConcurrencyReport(limits.algorithm().name().toLowerCase(Locale.ROOT), limits.initialLimit(),
				limits.minLimit(), limits.maxLimit(), this.partitions.serviceLimit(), this.shed.sum(),
				this.settings.maxWait().toMillis(), this.partitions.waiting(),
				(partitionBy != null) ? partitionBy.toString() : null, partitions);
	}

	@Override
	public List<Meter> register(MeterRegistry registry, String serviceId) {
		// Every service has it, limited or not, as it has its other reasons.
		return List.of(FunctionCounter.builder(REJECTED, this.shed, LongAdder::sum)
			.tags("service", serviceId, "reason", "shed")
			.description("Requests answered 503 because every endpoint of the service was at its concurrency limit")
			.register(registry));
	}

}
