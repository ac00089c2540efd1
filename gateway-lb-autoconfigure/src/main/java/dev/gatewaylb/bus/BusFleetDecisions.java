package dev.gatewaylb.bus;

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
public final class BusFleetDecisions implements FleetDecisions {

	private static final Log logger = LogFactory.getLog(BusFleetDecisions.class);

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
	}

	@Override
	public void rollout(String split, String plan, RolloutAction action, @Nullable String reason) {
		this.publisher.publishEvent(new RolloutVerdictEvent(this, this.matcher.getBusId(), this.everyone, split, plan,
				action.label(), reason));
	}

	@Override
	public void drain(String service, String endpoint, boolean drain) {
		this.publisher.publishEvent(
				new EndpointDrainEvent(this, this.matcher.getBusId(), this.everyone, service, endpoint, drain));
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
