package dev.gatewaylb.internal.runtime;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.settings.ServiceSettings;
import dev.gatewaylb.internal.upstream.Upstream;
import dev.gatewaylb.internal.health.Ejections;
import dev.gatewaylb.internal.health.OutlierDetection;
import dev.gatewaylb.internal.hedging.core.Hedging;
import dev.gatewaylb.internal.overload.core.Partitions;
import dev.gatewaylb.internal.retry.RetryBudget;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Everything a request to one service needs, resolved once: its settings, its balancer
 * (whose snapshot follows discovery), its upstream pools and clients, its retry budget,
 * its hedging and its counters. Immutable; {@link RuntimeFactory} builds a new one when
 * the service's settings change, on the control thread, carrying over what did not change
 * the way {@link Balancer#update} carries endpoint state, and {@link ServiceRuntimes}
 * swaps it in with one volatile write. A request reads it once and keeps it for all its
 * attempts.
 */
public final class ServiceRuntime {

	private static final Log logger = LogFactory.getLog(ServiceRuntime.class);

	private final String id;

	private final ServiceSettings settings;

	private final Balancer<Member> balancer;

	private final @Nullable Upstream upstream;

	private final RetryBudget budget;

	private final @Nullable Hedging hedging;

	private final ServiceCounters counters;

	private final AtomicBoolean failingOpen;

	private final Ejections ejections;

	private final long generation;

	private final LongSupplier nanoClock;

	private final Partitions partitions;

	private final @Nullable EndpointCookie affinityCookie;

	private final MirrorState mirror;

	ServiceRuntime(String id, ServiceSettings settings, Balancer<Member> balancer, @Nullable Upstream upstream,
			RetryBudget budget, @Nullable Hedging hedging, ServiceCounters counters, AtomicBoolean failingOpen,
			Ejections ejections, long generation, LongSupplier nanoClock, Partitions partitions,
			@Nullable EndpointCookie affinityCookie, MirrorState mirror) {
		this.id = id;
		this.settings = settings;
		this.balancer = balancer;
		this.upstream = upstream;
		this.budget = budget;
		this.hedging = hedging;
		this.counters = counters;
		this.failingOpen = failingOpen;
		this.ejections = ejections;
		this.generation = generation;
		this.nanoClock = nanoClock;
		this.partitions = partitions;
		this.affinityCookie = affinityCookie;
		this.mirror = mirror;
	}

	/**
	 * Returns the balancer clock's current time: the clock of every latency sample,
	 * deadline and ejection of the service.
	 * @return nanoseconds
	 */
	public long nanoTime() {
		return this.nanoClock.getAsLong();
	}

	/**
	 * Records an attempt that an endpoint answered well (passive health). Reads no clock
	 * unless the endpoint has a failure streak or past ejections to forget.
	 * @param state the endpoint's state
	 */
	public void succeeded(EndpointState state) {
		OutlierDetection detection = this.settings.health().passive();
		if (detection.countsAnswers()) {
			state.countAnswer(false);
		}
		if (state.consecutiveFailures() != 0 || state.timesEjected() != 0) {
			detection.succeeded(state, this.nanoClock.getAsLong());
		}
	}

	/**
	 * Records an attempt that failed because of its endpoint (passive health): it may
	 * eject the endpoint, and the balancer then rebuilds off the request path.
	 * @param state the endpoint's state
	 */
	public void failed(EndpointState state) {
		OutlierDetection detection = this.settings.health().passive();
		if (detection.countsAnswers()) {
			state.countAnswer(true);
		}
		if (!detection.isEnabled()) {
			return;
		}
		long now = this.nanoClock.getAsLong();
		if (detection.failed(state, snapshot(), this.ejections, now)) {
			logger.warn("Ejected " + state.address() + " of service " + this.id + " for "
					+ (state.ejectedUntilNanos() - now) / 1_000_000 + " ms after " + detection.consecutiveFailures()
					+ " failures in a row");
			this.balancer.reevaluateLater();
		}
	}

	/**
	 * Returns the service id, in lower case.
	 * @return the id
	 */
	public String id() {
		return this.id;
	}

	/**
	 * Returns the settings in force for the service.
	 * @return the settings
	 */
	public ServiceSettings settings() {
		return this.settings;
	}

	/**
	 * Returns whether gateway-lb balances the service. It does not when the application
	 * declares its own Spring Cloud LoadBalancer balancer for it: requests then go
	 * through Spring Cloud Gateway's own load-balancer and routing filters untouched.
	 * @return whether balanced here
	 */
	public boolean isBalancedHere() {
		return this.upstream != null;
	}

	/**
	 * Returns the current snapshot of the service's endpoints: one volatile read.
	 * @return the snapshot
	 */
	public Snapshot<Member> snapshot() {
		return this.balancer.snapshot();
	}

	/**
	 * Returns the service's balancer.
	 * @return the balancer
	 */
	public Balancer<Member> balancer() {
		return this.balancer;
	}

	/**
	 * Returns the service's upstream pools and clients.
	 * @return the upstream
	 * @throws IllegalStateException when the service is not balanced here
	 */
	public Upstream upstream() {
		Upstream upstream = this.upstream;
		if (upstream == null) {
			throw new IllegalStateException("service " + this.id + " is not balanced by gateway-lb");
		}
		return upstream;
	}

	/**
	 * Returns the service's upstream, or {@code null} when it is not balanced here.
	 * @return the upstream
	 */
	public @Nullable Upstream upstreamOrNull() {
		return this.upstream;
	}

	/**
	 * Returns the service's retry budget.
	 * @return the budget
	 */
	public RetryBudget budget() {
		return this.budget;
	}

	/**
	 * Returns the service's hedged requests: when an attempt gets a backup, and the
	 * budget of backups.
	 * @return the hedging, or {@code null} when the service does not hedge
	 */
	public @Nullable Hedging hedging() {
		return this.hedging;
	}

	/**
	 * Returns the ejections of the service's endpoints that have not ended: one per
	 * balancer, so that a settings change keeps them.
	 * @return the ejections
	 */
	public Ejections ejections() {
		return this.ejections;
	}

	/**
	 * Returns the service's counters.
	 * @return the counters
	 */
	public ServiceCounters counters() {
		return this.counters;
	}

	/**
	 * Returns whether an attempt's latency must be measured: peak-EWMA reads it, and so
	 * do latency-based ejection ({@code health.passive.latency-factor}) and load-aware
	 * localities ({@code locality.load-aware}) whatever the algorithm.
	 * @return whether latency is recorded
	 */
	public boolean recordsLatency() {
		return this.settings.balancer().algorithm() == Algorithm.PEAK_EWMA
				|| this.settings.health().passive().ejectsSlowEndpoints()
				|| (this.settings.balancer().locality().enabled() && this.settings.balancer().locality().loadAware());
	}

	/**
	 * Returns whether the service's endpoints are limited ({@code concurrency.limit}), so
	 * that attempts add samples to their limiters.
	 * @return whether limited
	 */
	public boolean limitsConcurrency() {
		return this.settings.concurrency().limits().enabled();
	}

	/**
	 * Returns the partitions of the service's concurrency limit.
	 * @return the partitions, {@link Partitions#NONE} for a service that has had no limit
	 * since it was built (one whose limit a refresh turned off keeps its own)
	 */
	public Partitions partitions() {
		return this.partitions;
	}

	/**
	 * Returns the signer and checker of the service's affinity cookie values, made for
	 * this service's id.
	 * @return the signer, or {@code null} when the service has no endpoint affinity
	 */
	public @Nullable EndpointCookie affinityCookie() {
		return this.affinityCookie;
	}

	/**
	 * Returns the service's mirroring as it goes: the mirrored requests in flight and
	 * what became of them.
	 * @return the state, there whether the service mirrors or not
	 */
	public MirrorState mirror() {
		return this.mirror;
	}

	static @Nullable EndpointCookie affinityCookie(String id, ServiceSettings settings) {
		return settings.affinity().enabled() ? settings.affinity().signerFor(id) : null;
	}

	static Partitions partitions(ServiceSettings settings) {
		Map<String, Double> shares = settings.concurrency().partitions();
		// A limited service has partitions of its own even with no shares (one, the
		// rest): they hold its limit's sum and its waiters, which NONE, shared by every
		// service, must not.
		return (shares.isEmpty() && !settings.concurrency().limits().enabled()) ? Partitions.NONE
				: Partitions.of(shares);
	}

	/**
	 * Returns how many runtimes the service has had, from 1.
	 * @return the generation
	 */
	public long generation() {
		return this.generation;
	}

	/**
	 * Counts a pick from {@code snapshot} if it failed open, and says so in the log once
	 * per episode. One plain volatile read when it did not.
	 * @param snapshot the snapshot picked from
	 */
	public void noteFailOpen(Snapshot<Member> snapshot) {
		if (!snapshot.isFailOpen()) {
			if (this.failingOpen.get()) {
				this.failingOpen.set(false);
			}
			return;
		}
		this.counters.failOpen().increment();
		if (this.failingOpen.compareAndSet(false, true)) {
			logger.warn("Every endpoint of service " + this.id
					+ " is ejected or unhealthy; sending requests to all of them (fail open)");
		}
	}

	ServiceRuntime with(ServiceSettings settings, @Nullable Upstream upstream, RetryBudget budget,
			@Nullable Hedging hedging) {
		// The partitions' counts carry over while their shares do: requests in flight
		// release into the counters they were counted in.
		Partitions partitions = (this.partitions != Partitions.NONE
				&& settings.concurrency().partitions().equals(this.partitions.configured())) ? this.partitions
						: partitions(settings);
		// The signer carries over while the affinity settings do: it holds each event
		// loop's MACs.
		EndpointCookie affinityCookie = settings.affinity().equals(this.settings.affinity()) ? this.affinityCookie
				: affinityCookie(this.id, settings);
		return new ServiceRuntime(this.id, settings, this.balancer, upstream, budget, hedging, this.counters,
				this.failingOpen, this.ejections, this.generation + 1, this.nanoClock, partitions, affinityCookie,
				this.mirror);
	}

	AtomicBoolean failingOpen() {
		return this.failingOpen;
	}

	@Override
	public String toString() {
		return "ServiceRuntime[" + this.id + " #" + this.generation + "]";
	}

}
