package dev.gatewaylb.internal.loadreports;

import java.time.Duration;
import java.util.List;

import dev.gatewaylb.config.LoadReportsProperties;
import dev.gatewaylb.internal.config.Layers;
import dev.gatewaylb.internal.loadreports.core.LoadWeights;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * A service's weights from its endpoints' load reports ({@code load-reports}).
 *
 * @param enabled whether the answers' reports are read (and kept from the client)
 * @param weights what the weights are computed from
 * @param probePath the path each endpoint is asked for its report out of band, or
 * {@code null} for none
 * @param probeInterval how often each endpoint is asked
 */
public record LoadReportsSettings(boolean enabled, LoadWeights.Settings weights, @Nullable String probePath,
		Duration probeInterval) {

	/**
	 * The built-in defaults of the {@code load-reports} block: off.
	 */
	public static final LoadReportsProperties BUILT_IN = new LoadReportsProperties(false,
			List.of("application_utilization", "cpu_utilization"), Duration.ofSeconds(10), Duration.ofMinutes(3), 1.0,
			10.0, new LoadReportsProperties.Probe("", Duration.ofSeconds(10)));

	/**
	 * No load reports.
	 */
	public static final LoadReportsSettings OFF = new LoadReportsSettings(false,
			new LoadWeights.Settings(BUILT_IN.utilization(), BUILT_IN.blackoutPeriod().toNanos(),
					BUILT_IN.weightExpirationPeriod().toNanos(), 1.0, 10.0),
			null, Duration.ofSeconds(10));

	/**
	 * Returns whether endpoints are asked for reports out of band.
	 * @return whether a probe path is set (and reports are enabled)
	 */
	public boolean probes() {
		return this.enabled && this.probePath != null;
	}

	/**
	 * Maps a service's {@code load-reports} block, or rejects a blackout that outlasts
	 * the expiration (no weight would ever count).
	 * @param block the block's layers
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the key and its value
	 */
	public static LoadReportsSettings map(Layers.Group<LoadReportsProperties> block) {
		Duration blackout = block.get(LoadReportsProperties::blackoutPeriod);
		Duration expiration = block.get(LoadReportsProperties::weightExpirationPeriod);
		if (blackout.compareTo(expiration) >= 0) {
			throw new InvalidConfigurationPropertyValueException(
					block.pathOf(LoadReportsProperties::blackoutPeriod, "blackout-period"), blackout,
					"expected: shorter than weight-expiration-period (" + expiration
							+ "), or no weight would ever count");
		}
		String path = block.get((p) -> (p.probe() != null) ? p.probe().path() : null);
		Duration interval = block.get((p) -> (p.probe() != null) ? p.probe().interval() : null);
		LoadWeights.Settings weights = new LoadWeights.Settings(block.get(LoadReportsProperties::utilization),
				blackout.toNanos(), expiration.toNanos(), block.get(LoadReportsProperties::errorUtilizationPenalty),
				block.get(LoadReportsProperties::maxWeightRatio));
		return new LoadReportsSettings(block.get(LoadReportsProperties::enabled), weights,
				path.isBlank() ? null : path.trim(), interval);
	}

}
