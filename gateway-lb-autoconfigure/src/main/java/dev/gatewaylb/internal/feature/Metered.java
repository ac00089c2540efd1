package dev.gatewaylb.internal.feature;

import java.util.List;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * A feature's per-service state that has meters of its own. The metrics root registers
 * them once per service, from the first state that has any (a service that never turns
 * the feature on has no series of it), and removes them with the service.
 */
public interface Metered {

	/**
	 * Registers the state's meters for a service.
	 * @param registry the registry
	 * @param serviceId the service id, the {@code service} tag
	 * @return the meters registered, empty when the service does not use the feature (the
	 * metrics root then asks again with its next state)
	 */
	List<Meter> register(MeterRegistry registry, String serviceId);

}
