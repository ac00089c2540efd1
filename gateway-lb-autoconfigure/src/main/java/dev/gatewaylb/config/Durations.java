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
	 * duration. A value too large for the unit's count to fit a long (one past 292 years
	 * in nanoseconds, say, which is what a bound rejects) is printed as ISO-8601 rather
	 * than failing the message that names it.
	 */
	static String format(Duration duration) {
		if (duration.isZero()) {
			return "0s";
		}
		try {
			for (ChronoUnit unit : UNITS) {
				if (isWholeNumberOf(unit.getDuration(), duration)) {
					return DurationStyle.SIMPLE.print(duration, unit);
				}
			}
			return DurationStyle.SIMPLE.print(duration, ChronoUnit.NANOS);
		}
		catch (ArithmeticException ex) {
			return duration.toString();
		}
	}

	/**
	 * Returns whether {@code duration} is a whole number of {@code unit}s (a unit of a
	 * second or more, or of less than a second), without converting it to nanoseconds.
	 */
	private static boolean isWholeNumberOf(Duration unit, Duration duration) {
		if (unit.getSeconds() > 0) {
			return duration.getNano() == 0 && duration.getSeconds() % unit.getSeconds() == 0;
		}
		return duration.getNano() % unit.getNano() == 0;
	}

}
