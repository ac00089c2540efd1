package dev.gatewaylb.bus;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.gateway.runtime.ServiceRuntimes;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.rollout.RolloutAction;
import dev.gatewaylb.rollout.SplitRollouts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

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
 * the fingerprint of the rollout block it is about; a replica whose block differs (a
 * refresh that has not reached it, or a stale one) ignores it. A replica ignores its own
 * events, and a followed decision is told to nobody, so an event never echoes.
 */
public final class BusFleetDecisions implements FleetDecisions, AutoCloseable {

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

	private final Destination everyone;

	private final SplitRollouts rollouts;

	private final ServiceRuntimes runtimes;

	/**
	 * Creates the channel; the rollouts and the actuator endpoint find it as the
	 * application's {@link FleetDecisions}.
	 * @param publisher publishes the bus's events
	 * @param matcher tells this replica's events from the others'
	 * @param destinations makes the destination of every replica
	 * @param rollouts the splits' rollouts
	 * @param runtimes every service's runtime
	 */
	public BusFleetDecisions(ApplicationEventPublisher publisher, ServiceMatcher matcher,
			Destination.Factory destinations, SplitRollouts rollouts, ServiceRuntimes runtimes) {
		this.publisher = publisher;
		this.matcher = matcher;
		this.everyone = destinations.getDestination(null);
		this.rollouts = rollouts;
		this.runtimes = runtimes;
		this.sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(QUEUE_CAPACITY),
				(task) -> {
					Thread thread = new Thread(task, THREAD_NAME);
					thread.setDaemon(true);
					return thread;
				}, (task, executor) -> dropped());
	}

	@Override
	public void rollout(String split, String plan, RolloutAction action, @Nullable String reason) {
		publish(new RolloutVerdictEvent(this, this.matcher.getBusId(), this.everyone, split, plan, action.label(),
				reason));
	}

	@Override
	public void drain(String service, String endpoint, boolean drain) {
		publish(new EndpointDrainEvent(this, this.matcher.getBusId(), this.everyone, service, endpoint, drain));
	}

	/**
	 * Returns how many decisions were dropped because the queue was full.
	 * @return the count
	 */
	public long droppedDecisions() {
		return this.dropped.sum();
	}

	/**
	 * Stops publishing: decisions still queued are dropped (the context is closing).
	 */
	@Override
	public void close() {
		this.sender.shutdownNow();
	}

	private void publish(Object event) {
		if (this.sender.isShutdown()) {
			return;
		}
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
	 * Follows another replica's rollout decision.
	 * @param event the decision
	 */
	@EventListener
	public void onRolloutVerdict(RolloutVerdictEvent event) {
		if (this.matcher.isFromSelf(event) || !this.matcher.isForSelf(event)) {
			return;
		}
		RolloutAction action = RolloutAction.of(event.getAction());
		if (action == null) {
			logger.warn("Ignored a rollout verdict with an unknown action from " + event.getOriginService() + ": "
					+ event.getAction());
			return;
		}
		this.rollouts.follow(event.getSplit(), event.getPlan(), action, event.getReason(), event.getOriginService());
	}

	/**
	 * Follows another replica's drain.
	 * @param event the drain
	 */
	@EventListener
	public void onEndpointDrain(EndpointDrainEvent event) {
		if (this.matcher.isFromSelf(event) || !this.matcher.isForSelf(event)) {
			return;
		}
		boolean known = this.runtimes.drain(event.getService(), event.getEndpoint(), event.isDrain());
		logger.info((event.isDrain() ? "Drained " : "Undrained ") + event.getEndpoint() + " of " + event.getService()
				+ " as " + event.getOriginService() + " did" + (known ? "" : " (not an endpoint here)"));
	}

}
