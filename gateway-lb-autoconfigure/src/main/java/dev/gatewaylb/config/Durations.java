package dev.gatewaylb.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import org.springframework.boot.convert.DurationStyle;

/**
 * Formats durations the way users write them in YAML, for messages.
 */
final class Durations {

	private static final ChronoUnit[] UNITS = { ChronoUnit.DAYS, ChronoUnit.HOURS, ChronoUnit.MINUTES,
			ChronoUnit.SECONDS, ChronoUnit.MILLIS };

	private Durations() {
	}

	/**
	 * Returns {@code 30s}, {@code -5s}, {@code 1500ms}: the largest unit that divides the
	 * duration.
	 */
	static String format(Duration duration) {
		if (duration.isZero()) {
			return "0s";
		}
		for (ChronoUnit unit : UNITS) {
			if (duration.toNanos() % unit.getDuration().toNanos() == 0) {
				return DurationStyle.SIMPLE.print(duration, unit);
			}
		}
		return DurationStyle.SIMPLE.print(duration, ChronoUnit.NANOS);
	}

}
