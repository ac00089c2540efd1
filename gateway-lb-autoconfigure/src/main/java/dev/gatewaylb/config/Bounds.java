package dev.gatewaylb.config;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The upper bounds that several binding records share, and the checks every record
 * applies with the same message, {@code key: value (expected: min to max)}. A bound is
 * far beyond what a deployment sets, and low enough that nothing derived from a value
 * overflows (durations are turned into nanoseconds, a long of which holds 292 years) or
 * asks for more memory than a gateway has. A bound that one record alone uses lives in
 * that record.
 */
final class Bounds {

	/**
	 * The most connections to one endpoint, requests waiting for one or in flight to one
	 * (pool and concurrency limits), and mirrored requests in flight: 65536. From one
	 * source address a gateway's connections to one host:port cannot outnumber its 65536
	 * ports, so neither can its HTTP/1.1 requests in flight; a queue or a limit past that
	 * is a typo.
	 */
	static final int MAX_PER_ENDPOINT = 65_536;

	/**
	 * The longest timeout or wait within one request: a day. A request meant to last
	 * longer (a stream) is what a timeout of 0, no limit, is for where the key has it.
	 */
	static final Duration MAX_TIMEOUT = Duration.ofDays(1);

	/**
	 * The longest period of the gateway's own clocks (health checks, ejections, judging
	 * intervals, ramps, decay): an hour. The longest ejection, ten times the base, stays
	 * far inside a long of nanoseconds.
	 */
	static final Duration MAX_PERIOD = Duration.ofHours(1);

	/**
	 * The longest lifetime of a cookie the gateway sets: 400 days, the most browsers keep
	 * one (RFC 6265bis caps Max-Age there).
	 */
	static final Duration MAX_COOKIE_AGE = Duration.ofDays(400);

	/**
	 * The largest factor a rule takes (hash-balance-factor, latency-factor, stdev-factor,
	 * overprovisioning-factor): 1000. A rule with that factor already never fires in
	 * practice; more (or Infinity) is a typo.
	 */
	static final int MAX_FACTOR = 1000;

	private Bounds() {
	}

	/**
	 * Rejects an integer outside {@code min} to {@code max}, naming the key.
	 * @param key the key, as the YAML spells it
	 * @param value the value, or {@code null} when not set
	 * @param min the smallest value allowed
	 * @param max the largest value allowed
	 */
	static void checkRange(String key, @Nullable Integer value, int min, int max) {
		if (value != null && (value < min || value > max)) {
			throw new IllegalArgumentException(key + ": " + value + " (expected: " + min + " to " + max + ")");
		}
	}

	/**
	 * Rejects a duration below 0s or above {@code max}, naming the key.
	 * @param key the key, as the YAML spells it
	 * @param value the value, or {@code null} when not set
	 * @param max the longest duration allowed
	 */
	static void checkDuration(String key, @Nullable Duration value, Duration max) {
		if (value != null && (value.isNegative() || value.compareTo(max) > 0)) {
			throw new IllegalArgumentException(
					key + ": " + Durations.format(value) + " (expected: 0s to " + Durations.format(max) + ")");
		}
	}

	/**
	 * Rejects a duration of 0s or less, or above {@code max}, naming the key.
	 * @param key the key, as the YAML spells it
	 * @param value the value, or {@code null} when not set
	 * @param max the longest duration allowed
	 */
	static void checkPositiveDuration(String key, @Nullable Duration value, Duration max) {
		if (value != null && (value.isNegative() || value.isZero() || value.compareTo(max) > 0)) {
			throw new IllegalArgumentException(
					key + ": " + Durations.format(value) + " (expected: > 0s, at most " + Durations.format(max) + ")");
		}
	}

}
