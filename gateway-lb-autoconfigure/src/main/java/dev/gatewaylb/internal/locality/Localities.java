package dev.gatewaylb.internal.locality;

import dev.gatewaylb.config.LocalityProperties;
import dev.gatewaylb.internal.balance.LevelSettings;
import dev.gatewaylb.internal.config.Layers;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Maps a service's {@code locality} block to the balancer's priority levels: endpoints in
 * the gateway's zone form level 0, the others level 1 (an endpoint's own {@code priority}
 * metadata wins), with Envoy's overprovisioning and panic.
 */
public final class Localities {

	/**
	 * Spring Cloud LoadBalancer's property for the zone the application runs in, which
	 * localities take as the gateway's zone.
	 */
	public static final String ZONE_PROPERTY = "spring.cloud.loadbalancer.zone";

	/**
	 * The built-in defaults of the {@code locality} block: off.
	 */
	public static final LocalityProperties BUILT_IN = new LocalityProperties(false, 1.4, 0.5, true);

	private Localities() {
	}

	/**
	 * Maps a service's {@code locality} block, or rejects localities turned on in a
	 * gateway that has no zone.
	 * @param locality the block's layers
	 * @param zone the gateway's zone ({@value #ZONE_PROPERTY}), or {@code null}
	 * @return the balancer's levels
	 * @throws InvalidConfigurationPropertyValueException naming {@value #ZONE_PROPERTY}
	 * when localities are on and the gateway has no zone
	 */
	public static LevelSettings levels(Layers.Group<LocalityProperties> locality, @Nullable String zone) {
		boolean enabled = locality.get(LocalityProperties::enabled);
		String trimmed = (zone != null && !zone.isBlank()) ? zone.trim() : null;
		if (enabled && trimmed == null) {
			throw new InvalidConfigurationPropertyValueException(ZONE_PROPERTY, "(not set)",
					"expected: the zone the gateway runs in, since "
							+ locality.pathOf(LocalityProperties::enabled, "enabled")
							+ " is true and endpoints in that zone are preferred");
		}
		return new LevelSettings(enabled, trimmed, locality.get(LocalityProperties::overprovisioningFactor),
				locality.get(LocalityProperties::panicThreshold), locality.get(LocalityProperties::loadAware));
	}

}
