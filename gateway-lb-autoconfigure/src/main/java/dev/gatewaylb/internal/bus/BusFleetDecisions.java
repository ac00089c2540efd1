package dev.gatewaylb.internal.bus;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import dev.gatewaylb.internal.runtime.Drain;
import dev.gatewaylb.internal.rollout.PeerState;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.settings.FleetSettings;
import dev.gatewaylb.internal.request.Logged;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.rollout.RolloutAction;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.bus.EndpointDrainEvent;
import dev.gatewaylb.bus.FleetEvent;
import dev.gatewaylb.bus.FleetStateEvent;
import dev.gatewaylb.bus.FleetStateRequestEvent;
import dev.gatewaylb.bus.RolloutVerdictEvent;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.cloud.bus.ServiceMatcher;
import org.springframework.cloud.bus.event.Destination;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.EventListener;

/**
 * Shares a replica's own decisions with its fleet over Spring Cloud Bus, and follows the
 * decisions of the others.
 * <p>
 * Only decisions travel, never judgements: each replica judges its own traffic, and the
 * first to roll back (or promote) tells the rest, which follow at once. An event carries
 * the fleet's name, the fingerprint of the rollout block it is about (with its
 * {@code rollout.id}), and the decision's version ({@link FleetClock}); a replica ignores
 * another fleet's events, a block that differs from its own, an event it has taken before
 * and a decision older than the one it has ({@link FleetInbox}), so a redelivered or
 * stale event changes nothing. A replica ignores its own events, and a followed decision
 * is told to nobody, so an event never echoes. A replica that starts asks its peers where
 * each rollout stands and which endpoints are drained, and starts there.
 */
public final class BusFleetDecisions implements FleetDecisions, MeterBinder, AutoCloseable {

	/**
	 * Most decisions waiting to be published; one more is dropped and counted.
	 */
	public static final int QUEUE_CAPACITY = 256;

	/**
	 * The publishing thread's name.
	 */
	public static final String THREAD_NAME = "gateway-lb-fleet";

	private static final Log logger = LogFactory.getLog(BusFleetDecisions.class);

	/**
	 * Publishes on a thread of its own, through a bounded queue: the rollouts decide on
	 * the control thread and the actuator's drain on a request thread, and a broker that
	 * is down or slow (the binder's send blocks) must stall neither every rollout nor an
	 * operator's action. Decisions leave in the order they were made.
	 */
	private final ThreadPoolExecutor sender;

	private final LongAdder dropped = new LongAdder();

	private final ApplicationEventPublisher publisher;

	private final ServiceMatcher matcher;

	private final Destination.Factory destinations;

	private final Destination fleet;

	private final FleetSettings channel;

	private final String fleetName;

	private final FleetClock clock;

	private final FleetInbox inbox;

	private final SplitRollouts rollouts;

	private final ServiceRuntimes runtimes;

	/**
	 * Creates the channel; the rollouts and the actuator endpoint find it as the
	 * application's {@link FleetDecisions}.
	 * @param publisher publishes the bus's events
	 * @param matcher tells this replica's events from the others'
	 * @param destinations makes the destination of the fleet's replicas
	 * @param channel the fleet's name, secret and what is followed
	 * @param application {@code spring.application.name}: every event is for the
	 * application's replicas, {@code <application>:**}, and the fleet is named after it
	 * unless named
	 * @param wallMillis the wall clock, for the decisions' versions
	 * @param rollouts the splits' rollouts
	 * @param runtimes every service's runtime
	 * @throws IllegalStateException when this replica's bus id is not one the fleet's
	 * destination reaches
	 */
	public BusFleetDecisions(ApplicationEventPublisher publisher, ServiceMatcher matcher,
			Destination.Factory destinations, FleetSettings channel, String application, LongSupplier wallMillis,
			SplitRollouts rollouts, ServiceRuntimes runtimes) {
		this.publisher = publisher;
		this.matcher = matcher;
		this.destinations = destinations;
		this.fleet = destinations.getDestination(application);
		this.channel = channel;
		this.fleetName = channel.name(application);
		this.clock = new FleetClock(wallMillis);
		this.inbox = new FleetInbox(this.fleetName, channel.secret(), channel.previousSecrets(), this.clock);
		this.rollouts = rollouts;
		this.runtimes = runtimes;
		if (!matcher.isForSelf(new FleetStateRequestEvent(this, "", this.fleet, this.fleetName, 1))) {
			throw new IllegalStateException("spring.cloud.bus.id '" + matcher.getBusId()
					+ "' is not reached by the fleet's destination '" + this.fleet.getDestinationAsString()
					+ "': a bus id starts with spring.application.name and a colon, as Spring Cloud Bus's default"
					+ " does (such as ${spring.application.name}:${HOSTNAME})");
		}
		this.sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(QUEUE_CAPACITY),
				(task) -> {
					Thread thread = new Thread(task, THREAD_NAME);
					thread.setDaemon(true);
					return thread;
				}, (task, executor) -> dropped());
	}

	@Override
	public void rollout(String split, String plan, RolloutAction action, @Nullable String reason, boolean byOperator) {
		long version = this.clock.next();
		this.inbox.advance(FleetInbox.rolloutSubject(split, plan), version);
		publish(new RolloutVerdictEvent(this, this.matcher.getBusId(), this.fleet, this.fleetName, version, split, plan,
				action.label(), reason, byOperator));
	}

	@Override
	public void drain(String service, String endpoint, boolean drain, boolean force) {
		long version = this.clock.next();
		this.inbox.advance(FleetInbox.drainSubject(service, endpoint), version);
		publish(new EndpointDrainEvent(this, this.matcher.getBusId(), this.fleet, this.fleetName, version, service,
				endpoint, drain, force));
	}

	/**
	 * Puts a refresh's fleet secrets in force: events are signed with the new secret from
	 * now on and checked against it and the previous ones. The channel's other keys are
	 * read at start-up only (a refresh that changes one is refused).
	 * @param channel the fleet's settings after the refresh
	 */
	public void secretsRefreshed(FleetSettings channel) {
		this.inbox.rekey(channel.secret(), channel.previousSecrets());
	}

	@Override
	public boolean asksPeersOnStart() {
		return this.channel.followRollouts();
	}

	/**
	 * Returns how many decisions were dropped because the queue was full.
	 * @return the count
	 */
	public long droppedDecisions() {
		return this.dropped.sum();
	}

	/**
	 * Returns how many events from the bus were dropped for a reason.
	 * @param reason the meter's tag: {@code other-fleet}, {@code unsigned},
	 * {@code bad-signature}, {@code invalid}, {@code duplicate} or {@code stale}
	 * @return the count, 0 for a reason not known
	 */
	public long rejectedEvents(String reason) {
		for (FleetInbox.Rejection rejection : FleetInbox.Rejection.values()) {
			if (rejection.label().equals(reason)) {
				return this.inbox.rejected(rejection);
			}
		}
		return 0;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (FleetInbox.Rejection rejection : FleetInbox.Rejection.values()) {
			FunctionCounter.builder("gateway.lb.fleet.rejected", this.inbox, (inbox) -> inbox.rejected(rejection))
				.tag("reason", rejection.label())
				.description("Events from the fleet's bus dropped, by why")
				.register(registry);
		}
		FunctionCounter.builder("gateway.lb.fleet.dropped", this.dropped, LongAdder::sum)
			.description("Decisions not told to the fleet: the queue to the bus was full")
			.register(registry);
	}

	/**
	 * Stops publishing: decisions still queued are dropped (the context is closing).
	 */
	@Override
	public void close() {
		this.sender.shutdownNow();
	}

	/**
	 * Asks the fleet where each rollout stands and which endpoints are drained, once the
	 * application is ready (its bus bindings started).
	 */
	@EventListener(ApplicationReadyEvent.class)
	public void askPeers() {
		if (this.channel.followRollouts() || this.channel.followDrains()) {
			publish(new FleetStateRequestEvent(this, this.matcher.getBusId(), this.fleet, this.fleetName,
					this.clock.next()));
		}
	}

	private void publish(FleetEvent event) {
		if (this.sender.isShutdown()) {
			return;
		}
		this.inbox.sign(event);
		this.sender.execute(() -> {
			try {
				this.publisher.publishEvent(event);
			}
			catch (RuntimeException ex) {
				logger.warn("Could not tell the fleet of a decision (" + event.getClass().getSimpleName() + ")", ex);
			}
		});
	}

	private void dropped() {
		this.dropped.increment();
		long count = this.dropped.sum();
		// The first drop, then one line per 100: a broker down for minutes must not
		// flood the log.
		if (count == 1 || count % 100 == 0) {
			logger.warn("Dropped a decision for the fleet: " + QUEUE_CAPACITY
					+ " are already waiting for the bus (is the broker reachable?); dropped so far: " + count);
		}
	}

	/**
	 * Returns whether an event from the bus is for this replica, from another, and passes
	 * the inbox; logs a dropped one (the first of each reason, then every 100th).
	 */
	private boolean admitted(FleetEvent event) {
		// The bus's matcher throws on an event without an origin: the inbox refuses
		// that one as invalid.
		if (event.getOriginService() != null && (this.matcher.isFromSelf(event) || !this.matcher.isForSelf(event))) {
			return false;
		}
		FleetInbox.Rejection rejection = this.inbox.admit(event);
		if (rejection == null) {
			return true;
		}
		long count = this.inbox.rejected(rejection);
		if (rejection == FleetInbox.Rejection.DUPLICATE || rejection == FleetInbox.Rejection.OTHER_FLEET) {
			// A broker's redelivery and a neighbour fleet are normal: not worth a
			// warning.
			if (logger.isDebugEnabled()) {
				logger.debug("Dropped " + describe(event) + ": " + rejection.label());
			}
		}
		else if (count == 1 || count % 100 == 0) {
			logger.warn("Dropped " + describe(event) + ": " + rejection.label() + " (" + count + " so far"
					+ ((rejection == FleetInbox.Rejection.INVALID && event.invalidField() != null)
							? "; field " + event.invalidField() : "")
					+ ")");
		}
		return false;
	}

	private static String describe(FleetEvent event) {
		return "a " + event.getClass().getSimpleName() + " from " + Logged.text(event.getOriginService()) + " of fleet "
				+ Logged.text(event.getFleet());
	}

	/**
	 * Follows another replica's rollout decision, unless it is older than the one this
	 * replica has about the same rollout.
	 * @param event the decision
	 */
	@EventListener
	public void onRolloutVerdict(RolloutVerdictEvent event) {
		if (!admitted(event) || !this.channel.followRollouts()) {
			return;
		}
		RolloutAction action = RolloutAction.of(event.getAction());
		if (action == null) {
			logger.warn("Ignored a rollout verdict with an unknown action from " + Logged.text(event.getOriginService())
					+ ": " + Logged.text(event.getAction()));
			return;
		}
		if (!this.inbox.advance(FleetInbox.rolloutSubject(event.getSplit(), event.getPlan()), event.getVersion())) {
			logger.info("Ignored " + action.label() + " of split " + Logged.text(event.getSplit()) + " from "
					+ Logged.text(event.getOriginService()) + ": a later decision about it is already in force");
			return;
		}
		this.rollouts.follow(event.getSplit(), event.getPlan(), action, event.getReason(), event.getOriginService(),
				event.isByOperator());
	}

	/**
	 * Follows another replica's drain, unless this replica has a later decision about the
	 * same endpoint (a drain and an undrain through two replicas arrive in either order).
	 * @param event the drain
	 */
	@EventListener
	public void onEndpointDrain(EndpointDrainEvent event) {
		if (!admitted(event) || !this.channel.followDrains()) {
			return;
		}
		if (!this.inbox.advance(FleetInbox.drainSubject(event.getService(), event.getEndpoint()), event.getVersion())) {
			logger.info("Ignored the " + (event.isDrain() ? "drain" : "undrain") + " of "
					+ Logged.text(event.getEndpoint()) + " from " + Logged.text(event.getOriginService())
					+ ": a later decision about it is already in force");
			return;
		}
		follow(event.getService(), event.getEndpoint(), event.isDrain(), event.isForce(), event.getOriginService());
	}

	/**
	 * Tells a replica that starts where this one has each rollout and which endpoints it
	 * drains. A replica that is starting too answers without the rollouts it has not
	 * heard of yet, so that a fleet that starts together (a deployment) starts them on
	 * the first step at once rather than each waiting an interval for the others; a
	 * decision a later answer carries is still followed.
	 * @param event the request
	 */
	@EventListener
	public void onStateRequest(FleetStateRequestEvent event) {
		if (!admitted(event)) {
			return;
		}
		List<FleetStateEvent.RolloutState> rollouts = new ArrayList<>();
		for (PeerState state : this.rollouts.peerStates()) {
			rollouts
				.add(new FleetStateEvent.RolloutState(state.split(), state.plan(), state.state().label(), state.step(),
						state.reason(), this.inbox.version(FleetInbox.rolloutSubject(state.split(), state.plan()))));
		}
		List<FleetStateEvent.DrainState> drains = new ArrayList<>();
		this.runtimes.drained()
			.forEach((service, endpoints) -> endpoints
				.forEach((endpoint) -> drains.add(new FleetStateEvent.DrainState(service, endpoint,
						this.inbox.version(FleetInbox.drainSubject(service, endpoint))))));
		publish(new FleetStateEvent(this, this.matcher.getBusId(),
				this.destinations.getDestination(event.getOriginService()), this.fleetName, this.clock.next(),
				rollouts.subList(0, Math.min(rollouts.size(), FleetStateEvent.MAX_ENTRIES)),
				drains.subList(0, Math.min(drains.size(), FleetStateEvent.MAX_ENTRIES))));
	}

	/**
	 * Takes a peer's answer: the rollouts still waiting start where the peer has them; a
	 * decision in it that is newer than this replica's (taken while the answer was on its
	 * way) is followed as a decision; the drains are followed.
	 * @param event the answer
	 */
	@EventListener
	public void onState(FleetStateEvent event) {
		if (!admitted(event)) {
			return;
		}
		String origin = event.getOriginService();
		if (this.channel.followRollouts()) {
			List<PeerState> states = new ArrayList<>();
			List<PeerState> newer = new ArrayList<>();
			for (FleetStateEvent.RolloutState rollout : event.getRollouts()) {
				Rollout.State state = state(rollout.state());
				if (state == null) {
					continue;
				}
				PeerState peer = new PeerState(rollout.split(), rollout.plan(), state, rollout.step(),
						rollout.reason());
				states.add(peer);
				if (rollout.version() > 0 && this.inbox
					.advance(FleetInbox.rolloutSubject(rollout.split(), rollout.plan()), rollout.version())) {
					newer.add(peer);
				}
			}
			this.rollouts.peersAnswered(states, origin);
			// Followed after the answer was taken (the control thread runs both in
			// order):
			// a rollout that just took the peer's state is already there.
			for (PeerState peer : newer) {
				this.rollouts.follow(peer.split(), peer.plan(), action(peer.state()), peer.reason(), origin, false);
			}
		}
		if (this.channel.followDrains()) {
			for (FleetStateEvent.DrainState drain : event.getDrains()) {
				if (this.inbox.advance(FleetInbox.drainSubject(drain.service(), drain.endpoint()),
						Math.max(1, drain.version()))) {
					// The peer drains it already: the cap is for new drains.
					follow(drain.service(), drain.endpoint(), true, true, origin);
				}
			}
		}
	}

	private void follow(String service, String endpoint, boolean drain, boolean force, String origin) {
		Drain done = this.runtimes.drain(service, endpoint, drain, force);
		if (done == Drain.OVER_MAX_DRAIN_PERCENT) {
			logger.warn("Did not drain " + Logged.text(endpoint) + " of " + Logged.text(service) + " as "
					+ Logged.text(origin) + " did: more than health.max-drain-percent of its endpoints would drain");
			return;
		}
		logger.info((drain ? "Drained " : "Undrained ") + Logged.text(endpoint) + " of " + Logged.text(service) + " as "
				+ Logged.text(origin) + " did" + ((done == Drain.DONE) ? "" : " (not an endpoint here)"));
	}

	private static Rollout.@Nullable State state(String label) {
		for (Rollout.State state : Rollout.State.values()) {
			if (state.label().equals(label.toLowerCase(Locale.ROOT))) {
				return state;
			}
		}
		return null;
	}

	private static RolloutAction action(Rollout.State state) {
		return switch (state) {
			case SHADOWING, PROGRESSING -> RolloutAction.RESUME;
			case PAUSED -> RolloutAction.PAUSE;
			case PROMOTED -> RolloutAction.PROMOTE;
			case ROLLED_BACK -> RolloutAction.ROLL_BACK;
		};
	}

}
