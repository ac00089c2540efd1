package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlEvents;
import dev.gatewaylb.internal.control.RequestClock;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.feature.ServiceView;
import dev.gatewaylb.internal.settings.ServiceSettings;
import dev.gatewaylb.internal.upstream.Upstream;
import dev.gatewaylb.internal.health.Ejections;
import dev.gatewaylb.internal.health.OutlierDetection;
import dev.gatewaylb.internal.retry.RetryBudget;
import io.netty.handler.codec.http.HttpHeaders;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Everything a request to one service needs, resolved once: its settings, its balancer
 * (whose snapshot follows discovery), its upstream pools and clients, its retry budget,
 * its counters, its clock, and each feature's state of it ({@link #feature}). Immutable;
 * {@link RuntimeFactory} builds a new one when the service's settings change, on the
 * control thread, carrying over what did not change the way {@link Balancer#update}
 * carries endpoint state (each feature carries its own state over), and
 * {@link ServiceRuntimes} swaps it in with one volatile write. A request reads it once
 * and keeps it for all its attempts.
 */
public final class ServiceRuntime implements ServiceView {

	private static final Log logger = LogFactory.getLog(ServiceRuntime.class);

	private final String id;

	private final ServiceSettings settings;

	private final Balancer<Member> balancer;

	private final @Nullable Upstream upstream;

	private final RetryBudget budget;

	private final ServiceCounters counters;

	private final AtomicBoolean failingOpen;

	private final Ejections ejections;

	private final long generation;

	private final LongSupplier nanoClock;

	private final RequestClock clock;

	/**
	 * Hears the service's ejections, wherever they are decided.
	 */
	private final ControlEvents events;

	/**
	 * Each feature's state of the service, in the order of {@link #features}: read by
	 * {@link #feature}, never written after construction.
	 */
	private final Object[] states;

	private final List<ServiceFeature<?, ?>> features;

	ServiceRuntime(String id, ServiceSettings settings, Balancer<Member> balancer, @Nullable Upstream upstream,
			RetryBudget budget, ServiceCounters counters, AtomicBoolean failingOpen, Ejections ejections,
			long generation, RequestClock clock, List<ServiceFeature<?, ?>> features, Object[] states,
			ControlEvents events) {
		this.events = events;
		this.id = id;
		this.settings = settings;
		this.balancer = balancer;
		this.upstream = upstream;
		this.budget = budget;
		this.counters = counters;
		this.failingOpen = failingOpen;
		this.ejections = ejections;
		this.generation = generation;
		this.nanoClock = clock::nanoTime;
		this.clock = clock;
		this.features = features;
		this.states = states;
	}

	/**
	 * Returns what hears the control side's decisions about the service's endpoints.
	 * @return the events' listener
	 */
	public ControlEvents events() {
		return this.events;
	}

	/**
	 * Returns the request path's clock and timers: every deadline and idle limit of the
	 * service's exchanges reads and schedules here.
	 * @return the clock, on the same time as {@link #nanoTime()}
	 */
	public RequestClock clock() {
		return this.clock;
	}

	/**
	 * Returns the service's state of a feature: one look through a few entries, no
	 * allocation.
	 * @param <S> the state's type
	 * @param type the state's type, one per feature
	 * @return the state; a feature the service does not use has one that does nothing
	 * @throws IllegalArgumentException when no feature of that state is wired
	 */
	public <S> S feature(Class<S> type) {
		Object[] states = this.states;
		for (Object state : states) {
			if (state.getClass() == type) {
				return type.cast(state);
			}
		}
		throw new IllegalArgumentException("no feature with state " + type.getName() + " is wired");
	}

	/**
	 * Returns every feature's state of the service, in the order the features are wired.
	 * @return the states
	 */
	public List<Object> features() {
		return List.of(this.states);
	}

	/**
	 * Returns the balancer clock's current time: the clock of every latency sample,
	 * deadline and ejection of the service.
	 * @return nanoseconds
	 */
	@Override
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
			this.events.ejected(this.id, state.address(), "consecutive-failures");
			this.balancer.reevaluateLater();
		}
	}

	/**
	 * Returns the service id, in lower case.
	 * @return the id
	 */
	@Override
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
	@Override
	public Snapshot<Member> snapshot() {
		return this.balancer.snapshot();
	}

	/**
	 * Returns the service's balancer.
	 * @return the balancer
	 */
	@Override
	public Balancer<Member> balancer() {
		return this.balancer;
	}

	@Override
	public Mono<HttpHeaders> probe(int index, String path, Duration timeout) {
		Upstream upstream = this.upstream;
		Snapshot<Member> snapshot = this.balancer.snapshot();
		if (upstream == null || index < 0 || index >= snapshot.size()) {
			return Mono.empty();
		}
		Member member = snapshot.value(index);
		String url = (member.secure() ? "https://" : "http://") + member.endpoint().address() + path;
		return upstream.probeClient()
			.get()
			.uri(url)
			.responseSingle((response, body) -> body.then(Mono.just(response.responseHeaders())))
			.timeout(timeout)
			.onErrorResume((error) -> Mono.empty());
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
	 * levels' spill (their {@code load-aware}) whatever the algorithm.
	 * @return whether latency is recorded
	 */
	public boolean recordsLatency() {
		return this.settings.balancer().algorithm() == Algorithm.PEAK_EWMA
				|| this.settings.health().passive().ejectsSlowEndpoints()
				|| (this.settings.balancer().levels().enabled() && this.settings.balancer().levels().loadAware());
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

	ServiceRuntime with(ServiceSettings settings, @Nullable Upstream upstream, RetryBudget budget, Object[] states) {
		return new ServiceRuntime(this.id, settings, this.balancer, upstream, budget, this.counters, this.failingOpen,
				this.ejections, this.generation + 1, this.clock, this.features, states, this.events);
	}

	/**
	 * Returns the features wired into the service's runtimes.
	 */
	List<ServiceFeature<?, ?>> wiredFeatures() {
		return this.features;
	}

	/**
	 * Returns the states of the features, in their order: for the next runtime's build.
	 */
	Object[] states() {
		return this.states;
	}

	AtomicBoolean failingOpen() {
		return this.failingOpen;
	}

	@Override
	public String toString() {
		return "ServiceRuntime[" + this.id + " #" + this.generation + "]";
	}

}
