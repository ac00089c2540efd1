package dev.gatewaylb.bus;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonCreator;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.bus.event.Destination;

/**
 * A peer's answer to a {@link FleetStateRequestEvent}, for the replica that asked: where
 * each of its rollouts stands and which endpoints it drains, each with the version of the
 * decision that put it there (0 when none was taken in the fleet: a step a replica judged
 * on its own).
 */
public class FleetStateEvent extends FleetEvent {

	/**
	 * The most rollouts, and the most drains, an answer may carry.
	 */
	public static final int MAX_ENTRIES = 1000;

	private List<RolloutState> rollouts = List.of();

	private List<DrainState> drains = List.of();

	/**
	 * For Jackson.
	 */
	public FleetStateEvent() {
	}

	/**
	 * Creates the event. Public for the fleet's publisher, in another package; never
	 * Jackson's creator, which would call it with a {@code null} source: Jackson takes
	 * the constructor without arguments and the setters.
	 * @param source the publisher
	 * @param origin this replica's bus id
	 * @param destination the replica that asked
	 * @param fleet the fleet's name
	 * @param version this replica's clock
	 * @param rollouts where each rollout stands
	 * @param drains the endpoints drained
	 */
	@JsonCreator(mode = JsonCreator.Mode.DISABLED)
	public FleetStateEvent(Object source, String origin, Destination destination, String fleet, long version,
			List<RolloutState> rollouts, List<DrainState> drains) {
		super(source, origin, destination, fleet, version);
		this.rollouts = List.copyOf(rollouts);
		this.drains = List.copyOf(drains);
	}

	public List<RolloutState> getRollouts() {
		return this.rollouts;
	}

	public void setRollouts(@Nullable List<RolloutState> rollouts) {
		this.rollouts = (rollouts != null) ? rollouts : List.of();
	}

	public List<DrainState> getDrains() {
		return this.drains;
	}

	public void setDrains(@Nullable List<DrainState> drains) {
		this.drains = (drains != null) ? drains : List.of();
	}

	@Override
	public List<@Nullable String> signedFields() {
		List<@Nullable String> fields = new ArrayList<>();
		for (RolloutState rollout : this.rollouts) {
			fields.add("rollout");
			if (rollout == null) {
				// A peer's JSON may hold a null entry: signed as such, refused by
				// invalidField.
				fields.add(null);
				continue;
			}
			fields.add(rollout.split());
			fields.add(rollout.plan());
			fields.add(rollout.state());
			fields.add(String.valueOf(rollout.step()));
			fields.add(rollout.reason());
			fields.add(String.valueOf(rollout.version()));
		}
		for (DrainState drain : this.drains) {
			fields.add("drain");
			if (drain == null) {
				fields.add(null);
				continue;
			}
			fields.add(drain.service());
			fields.add(drain.endpoint());
			fields.add(String.valueOf(drain.version()));
		}
		return fields;
	}

	@Override
	public @Nullable String invalidField() {
		if (this.rollouts.size() > MAX_ENTRIES) {
			return "rollouts";
		}
		if (this.drains.size() > MAX_ENTRIES) {
			return "drains";
		}
		for (RolloutState rollout : this.rollouts) {
			if (rollout == null || !isName(rollout.split()) || rollout.plan() == null
					|| !isName(rollout.plan().replace(' ', '_')) || !isName(rollout.state())
					|| !isReason(rollout.reason())) {
				return "rollouts";
			}
		}
		for (DrainState drain : this.drains) {
			if (drain == null || !isName(drain.service()) || !isName(drain.endpoint())) {
				return "drains";
			}
		}
		return null;
	}

	/**
	 * Where one rollout stands on the peer.
	 *
	 * @param split the split's name
	 * @param plan the rollout block's fingerprint, with its id
	 * @param state the state's label ({@code progressing}, {@code paused},
	 * {@code promoted}, {@code rolled-back})
	 * @param step the step in force
	 * @param reason why it was rolled back, or {@code null}
	 * @param version the version of the fleet decision that put it there, 0 for none
	 */
	public record RolloutState(String split, String plan, String state, int step, @Nullable String reason,
			long version) {
	}

	/**
	 * An endpoint the peer drains.
	 *
	 * @param service the service id
	 * @param endpoint the endpoint's {@code host:port}
	 * @param version the version of the drain, 0 when the peer does not know it
	 */
	public record DrainState(String service, String endpoint, long version) {
	}

}
