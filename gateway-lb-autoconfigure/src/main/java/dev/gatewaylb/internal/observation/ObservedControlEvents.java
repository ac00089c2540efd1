package dev.gatewaylb.internal.observation;

import dev.gatewaylb.internal.control.ControlEvents;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The control side's events as observations: each is a {@code gateway.lb.control}
 * observation that starts, carries one event ({@code gateway.lb.ejected},
 * {@code gateway.lb.drained}, {@code gateway.lb.undrained},
 * {@code gateway.lb.rollout-verdict}) and stops; a span of its own with a tracer, a timer
 * and a counter per event with meters. Rare (an ejection, a drain, a verdict a few
 * seconds apart at most), so their allocation does not matter.
 */
public final class ObservedControlEvents implements ControlEvents {

	/** The observation's name. */
	public static final String NAME = "gateway.lb.control";

	private final ObservationRegistry registry;

	public ObservedControlEvents(ObservationRegistry registry) {
		this.registry = registry;
	}

	/**
	 * Returns the events for a registry, or {@link ControlEvents#NONE} for none; a
	 * registry with no handler (yet) records nothing, asked at each event.
	 * @param registry the application's registry, or {@code null}
	 * @return the events
	 */
	public static ControlEvents of(@Nullable ObservationRegistry registry) {
		return (registry == null || registry == ObservationRegistry.NOOP) ? ControlEvents.NONE
				: new ObservedControlEvents(registry);
	}

	@Override
	public void ejected(String service, String endpoint, String reason) {
		record("ejected", "gateway.lb.service", service, endpoint, reason);
	}

	@Override
	public void drained(String service, String endpoint, boolean draining) {
		record(draining ? "drained" : "undrained", "gateway.lb.service", service, endpoint, null);
	}

	@Override
	public void rolloutVerdict(String split, String rollout, String verdict, int step, @Nullable String reason) {
		if (this.registry.isNoop()) {
			return;
		}
		Observation observation = Observation.createNotStarted(NAME, this.registry)
			.contextualName("gateway-lb rollout-verdict " + split)
			.lowCardinalityKeyValue("gateway.lb.event", "rollout-verdict")
			.lowCardinalityKeyValue("gateway.lb.split", split)
			.lowCardinalityKeyValue("gateway.lb.verdict", verdict)
			.highCardinalityKeyValue("gateway.lb.rollout", rollout + "/" + step);
		emit(observation, "rollout-verdict", verdict + " at step " + step, reason);
	}

	private void record(String event, String subjectKey, String subject, String endpoint, @Nullable String reason) {
		if (this.registry.isNoop()) {
			return;
		}
		Observation observation = Observation.createNotStarted(NAME, this.registry)
			.contextualName("gateway-lb " + event + " " + subject)
			.lowCardinalityKeyValue("gateway.lb.event", event)
			.lowCardinalityKeyValue(subjectKey, subject)
			.highCardinalityKeyValue("gateway.lb.endpoint", endpoint);
		emit(observation, event, event + " " + endpoint, reason);
	}

	/**
	 * Starts an event's observation, with its reason if any, gives it its one event and
	 * stops it.
	 */
	private static void emit(Observation observation, String event, String description, @Nullable String reason) {
		if (reason != null) {
			observation.highCardinalityKeyValue("gateway.lb.reason", reason);
		}
		observation.start();
		observation.event(Observation.Event.of("gateway.lb." + event, description));
		observation.stop();
	}

}
