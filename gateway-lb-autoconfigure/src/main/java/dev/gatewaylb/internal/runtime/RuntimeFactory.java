package dev.gatewaylb.internal.runtime;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlEvents;
import dev.gatewaylb.internal.control.RequestClock;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.settings.ServiceSettings;
import dev.gatewaylb.internal.upstream.Upstream;
import dev.gatewaylb.internal.upstream.Upstreams;
import dev.gatewaylb.internal.health.Ejections;
import dev.gatewaylb.internal.retry.RetryBudget;
import org.jspecify.annotations.Nullable;

/**
 * Builds a service's runtimes: the first from its settings, and each next one from the
 * runtime in force and new settings ({@link #next}), carrying over everything the new
 * settings did not touch: the balancer (rebuilt in place when its settings changed, so
 * every endpoint keeps its state), the upstream pools unless the client changed
 * ({@link dev.gatewaylb.internal.settings.UpstreamSettings#sameClientAs}), the retry
 * budget while its settings are equal, each feature's state as the feature carries it,
 * and always the counters, the ejections and the fail-open flag.
 * <p>
 * Schedules, publishes and closes nothing: what the caller must do about a change (tell
 * listeners of the balancer's new snapshot, retire the replaced upstream) comes back in
 * the {@link Next}. Runs on the control thread; called directly by tests.
 */
final class RuntimeFactory {

	private final Upstreams upstreams;

	private final LongSupplier nanoClock;

	private final RequestClock clock;

	private final Supplier<? extends RandomGenerator> random;

	private final Executor rebuilds;

	private final List<ServiceFeature<?, ?>> features;

	private final ControlEvents events;

	/**
	 * Creates the factory.
	 * @param upstreams builds each service's pools
	 * @param clock the request clock, whose time is the balancers' clock
	 * @param random the random source of the randomized algorithms
	 * @param rebuilds runs the rebuilds a pick asks for, off the request path
	 * @param features the features, whose state every runtime holds
	 */
	RuntimeFactory(Upstreams upstreams, RequestClock clock, Supplier<? extends RandomGenerator> random,
			Executor rebuilds, List<ServiceFeature<?, ?>> features) {
		this(upstreams, clock, random, rebuilds, features, ControlEvents.NONE);
	}

	/**
	 * Creates the factory of runtimes whose ejections are heard.
	 * @param upstreams as above
	 * @param clock as above
	 * @param random as above
	 * @param rebuilds as above
	 * @param features as above
	 * @param events hears each runtime's ejections
	 */
	RuntimeFactory(Upstreams upstreams, RequestClock clock, Supplier<? extends RandomGenerator> random,
			Executor rebuilds, List<ServiceFeature<?, ?>> features, ControlEvents events) {
		this.events = events;
		this.upstreams = Objects.requireNonNull(upstreams, "upstreams");
		this.clock = Objects.requireNonNull(clock, "clock");
		this.nanoClock = clock::nanoTime;
		this.random = Objects.requireNonNull(random, "random");
		this.rebuilds = Objects.requireNonNull(rebuilds, "rebuilds");
		this.features = List.copyOf(features);
	}

	/**
	 * Returns a service's first runtime: a balancer with no endpoints yet, and pools when
	 * gateway-lb balances the service.
	 * @param serviceId the service id, in lower case
	 * @param settings its settings
	 * @param balancedHere whether gateway-lb balances it
	 * @return the runtime, generation 1
	 */
	ServiceRuntime first(String serviceId, ServiceSettings settings, boolean balancedHere) {
		Balancer<Member> balancer = new Balancer<>(settings.balancer(), Member::endpoint, this.nanoClock, this.random,
				this.rebuilds);
		Upstream upstream = balancedHere ? this.upstreams.build(serviceId, settings.upstream()) : null;
		return new ServiceRuntime(serviceId, settings, balancer, upstream, budget(settings), ServiceCounters.create(),
				new AtomicBoolean(), new Ejections(), 1, this.clock, this.features, states(null, serviceId, settings),
				this.events);
	}

	/**
	 * Returns the runtime that follows {@code current} under new settings.
	 * @param current the runtime in force
	 * @param settings the service's new settings
	 * @return the next runtime and what changed; {@link Next#changed()} is false, and the
	 * runtime {@code current}, when the settings are equal
	 */
	Next next(ServiceRuntime current, ServiceSettings settings) {
		ServiceSettings previous = current.settings();
		if (previous.equals(settings)) {
			return new Next(current, false, null, null);
		}
		Snapshot<Member> rebuiltFrom = null;
		if (!previous.balancer().equals(settings.balancer())) {
			rebuiltFrom = current.snapshot();
			current.balancer().update(settings.balancer());
		}
		Upstream upstream = current.upstreamOrNull();
		Upstream replaced = null;
		if (upstream != null && !upstream.settings().sameClientAs(settings.upstream())) {
			replaced = upstream;
			upstream = this.upstreams.build(current.id(), settings.upstream());
		}
		RetryBudget budget = previous.retry().equals(settings.retry()) ? current.budget() : budget(settings);
		return new Next(current.with(settings, upstream, budget, states(current.states(), current.id(), settings)),
				true, rebuiltFrom, replaced);
	}

	/**
	 * Returns every feature's next state of a service.
	 * @param previous the states in force, or {@code null} for the service's first
	 */
	private Object[] states(Object @Nullable [] previous, String serviceId, ServiceSettings settings) {
		Feature.Context service = new Feature.Context(serviceId, this.nanoClock, this.clock::currentTimeMillis);
		Object[] states = new Object[this.features.size()];
		for (int i = 0; i < states.length; i++) {
			states[i] = this.features.get(i).next((previous != null) ? previous[i] : null, settings, service);
		}
		return states;
	}

	private RetryBudget budget(ServiceSettings settings) {
		return new RetryBudget(settings.retry().budgetPercent(), settings.retry().budgetMinPerSecond(), this.nanoClock);
	}

	/**
	 * A service's next runtime.
	 *
	 * @param runtime the runtime to put in force
	 * @param changed whether it differs from the one in force
	 * @param rebuiltFrom the balancer's snapshot before the new settings rebuilt it, or
	 * {@code null} when the balancer's settings stayed
	 * @param replaced the upstream the new runtime no longer uses, to close once idle, or
	 * {@code null} when the pools stayed
	 */
	record Next(ServiceRuntime runtime, boolean changed, @Nullable Snapshot<Member> rebuiltFrom,
			@Nullable Upstream replaced) {
	}

}
