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
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.overload.core.ConcurrencyLimits;
import dev.gatewaylb.internal.overload.core.EndpointLimiter;
import org.jspecify.annotations.Nullable;

/**
 * Adaptive concurrency limits ({@code concurrency.limit}), the {@code concurrency-limits}
 * job: every {@link #TICK} on the control thread, each limited service's endpoints close
 * their sample windows and their limiters set their limits ({@link EndpointLimiter}), and
 * the service's limit (the sum of its endpoints') is published for its partitions. The
 * request path only adds samples to its endpoint's sums and reads the limit a pick
 * compares with the endpoint's requests in flight.
 * <p>
 * A service's limiters live as long as its limits do not change: a refresh that changes
 * {@code concurrency.*} starts every endpoint again from {@code initial-limit}, one that
 * turns limits off lifts them at once, and an endpoint that joins gets a limiter of its
 * own.
 */
final class ConcurrencyLimiting {

	/**
	 * How often windows are looked at: a tenth of the longest window, so that a window
	 * that fills in less closes soon after.
	 */
	static final Duration TICK = Duration.ofMillis(100);

	private final Supplier<List<ServiceRuntime>> runtimes;

	private final ControlThread control;

	private final Separately separately = new Separately("concurrency-limits");

	/**
	 * Each limited service's limiters. Control thread only.
	 */
	private final Map<String, Limiters> services = new HashMap<>();

	private ControlThread.@Nullable Job job;

	ConcurrencyLimiting(Supplier<List<ServiceRuntime>> runtimes, ControlThread control) {
		this.runtimes = runtimes;
		this.control = control;
	}

	synchronized void start() {
		if (this.job == null) {
			this.job = this.control.every("concurrency-limits", TICK, this::update);
		}
	}

	private void update() {
		long now = this.control.nanoTime();
		List<ServiceRuntime> all = this.runtimes.get();
		Map<String, ServiceRuntime> present = new HashMap<>();
		all.forEach((runtime) -> present.put(runtime.id(), runtime));
		// A service that left, or turned its limits off, gets its endpoints back
		// unlimited.
		this.services.entrySet().removeIf((entry) -> {
			ServiceRuntime runtime = present.get(entry.getKey());
			if (runtime != null && runtime.settings().concurrency().limits().enabled()) {
				return false;
			}
			entry.getValue().lift();
			if (runtime != null) {
				runtime.partitions().serviceLimit(0);
			}
			return true;
		});
		this.separately.forEach(all, ServiceRuntime::id, (runtime) -> {
			ConcurrencyLimits limits = runtime.settings().concurrency().limits();
			if (!limits.enabled() || !runtime.isBalancedHere()) {
				return;
			}
			Limiters limiters = this.services.get(runtime.id());
			if (limiters == null || !limiters.limits.equals(limits)) {
				if (limiters != null) {
					limiters.lift();
				}
				limiters = new Limiters(limits);
				this.services.put(runtime.id(), limiters);
			}
			runtime.partitions().serviceLimit(limiters.update(runtime.snapshot(), now));
		});
	}

	/**
	 * The limiters of one service's endpoints.
	 */
	private static final class Limiters {

		final ConcurrencyLimits limits;

		Map<EndpointState, EndpointLimiter> byEndpoint = new IdentityHashMap<>();

		Limiters(ConcurrencyLimits limits) {
			this.limits = limits;
		}

		/**
		 * Updates the limiter of every endpoint of {@code snapshot}; forgets those of
		 * endpoints that left.
		 * @return the sum of the limits of the endpoints that may be picked
		 */
		long update(Snapshot<Member> snapshot, long now) {
			Map<EndpointState, EndpointLimiter> next = new IdentityHashMap<>(snapshot.size());
			long sum = 0;
			for (int i = 0; i < snapshot.size(); i++) {
				EndpointState state = snapshot.state(i);
				EndpointLimiter limiter = this.byEndpoint.get(state);
				if (limiter == null) {
					limiter = new EndpointLimiter(this.limits, state, now);
				}
				next.put(state, limiter);
				int limit = limiter.update(state, now);
				if (!snapshot.isDraining(i) && snapshot.endpoint(i).weight() > 0) {
					sum += limit;
				}
			}
			this.byEndpoint = next;
			return sum;
		}

		void lift() {
			this.byEndpoint.keySet().forEach((state) -> state.concurrencyLimit(EndpointState.UNLIMITED));
		}

	}

}
