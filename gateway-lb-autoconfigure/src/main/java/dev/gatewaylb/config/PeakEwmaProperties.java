package dev.gatewaylb.config;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Peak-EWMA settings; a key that is not set is {@code null}.
 *
 * @param decay Time constant over which old latency samples lose weight and an idle
 * endpoint's latency decays towards 0.
 */
public record PeakEwmaProperties(@Nullable Duration decay) {

	public PeakEwmaProperties {
		Bounds.checkPositiveDuration("decay", decay, Bounds.MAX_PERIOD);
	}

}
