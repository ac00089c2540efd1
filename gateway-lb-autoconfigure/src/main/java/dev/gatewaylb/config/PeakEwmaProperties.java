package dev.gatewaylb.config;

import java.time.Duration;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Peak-EWMA settings.
 *
 * @param decay Time constant over which old latency samples lose weight and an idle
 * endpoint's latency decays towards 0.
 */
public record PeakEwmaProperties(@DefaultValue("10s") Duration decay) {

	public PeakEwmaProperties {
		if (decay.isNegative() || decay.isZero()) {
			throw new IllegalArgumentException("decay: " + Durations.format(decay) + " (expected: > 0s)");
		}
	}

}
