package dev.gatewaylb.internal.rollout;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

/**
 * What a rollout does.
 *
 * @param target the split target whose share ramps
 * @param steps the target's percent of the split's traffic at each step, increasing, each
 * 1 to 100
 * @param intervalNanos the time on each step before it is judged
 * @param minRequests the fewest canary requests an interval must have to be judged
 * @param maxErrorRateIncrease the most the canary's error rate may exceed the others'
 * @param maxLatencyRatio the most the canary's p99 may be, as a multiple of the others'
 * @param id the rollout's epoch ({@code rollout.id}): replicas act on each other's
 * decisions only for the same id, so an operator who runs the same block again after a
 * roll-back gives it a new one; {@code null} derives one from the rest of the plan
 * @param errorStatuses the answers that count as the canary's (or the others') errors,
 * 400 to 599, sorted; empty for every 5xx ({@code rollout.error-statuses}, independent of
 * passive health's {@code on-statuses})
 * @param maxOutcomesPerClient the most answers one client counts for on each side per
 * interval ({@code rollout.max-outcomes-per-client}), 0 for no limit: one client cannot
 * fill {@code min-requests} or outweigh the others
 * @param minClients the fewest distinct clients a side's answers must come from to be
 * judged ({@code rollout.min-clients}), 0 for any
 * @param shadow whether the rollout starts with a shadow stage ({@code rollout.shadow})
 * @param maxMismatchRate the most the shadow stage's copied answers may differ from the
 * primary's ({@code rollout.max-mismatch-rate}), 0 to 1
 */
public record RolloutPlan(String target, int[] steps, long intervalNanos, long minRequests, double maxErrorRateIncrease,
		double maxLatencyRatio, String id, int[] errorStatuses, int maxOutcomesPerClient, int minClients,
		boolean shadow, double maxMismatchRate) {

	/**
	 * The default {@code max-mismatch-rate}.
	 */
	public static final double DEFAULT_MAX_MISMATCH_RATE = 0.01;

	/**
	 * The longest {@code rollout.id}.
	 */
	public static final int MAX_ID_LENGTH = 64;

	/**
	 * {@code max-outcomes-per-client} when the block does not set it.
	 */
	public static final int DEFAULT_MAX_OUTCOMES_PER_CLIENT = 10;

	/**
	 * {@code min-clients} when the block does not set it.
	 */
	public static final int DEFAULT_MIN_CLIENTS = 20;

	/**
	 * The largest {@code max-outcomes-per-client}.
	 */
	public static final int MAX_OUTCOMES_PER_CLIENT = 1_000_000;

	/**
	 * The largest {@code min-clients}: a side tells clients apart in
	 * {@link RolloutWindow#CLIENT_SLOTS} slots, and counts far below that are exact
	 * enough to compare against.
	 */
	public static final int MAX_MIN_CLIENTS = 1000;

	/**
	 * The shortest {@code interval}: a second, a few ticks of the rollout job.
	 */
	public static final long MIN_INTERVAL_NANOS = Duration.ofSeconds(1).toNanos();

	/**
	 * The longest {@code interval}: a week, a step a day seven times over; a deadline
	 * that far ahead stays far inside a long of nanoseconds.
	 */
	public static final long MAX_INTERVAL_NANOS = Duration.ofDays(7).toNanos();

	/**
	 * The largest {@code min-requests}: a billion, more than a canary answers in a day at
	 * 10,000 a second.
	 */
	public static final long MAX_MIN_REQUESTS = 1_000_000_000L;

	/**
	 * The largest {@code max-latency-ratio}: 1000. A canary a thousand times slower is
	 * rolled back by nothing else either; more (or Infinity) is a typo.
	 */
	public static final int MAX_LATENCY_RATIO = 1000;

	public RolloutPlan {
		Objects.requireNonNull(target, "target");
		steps = steps.clone();
		if (steps.length == 0) {
			throw new IllegalArgumentException("steps: [] (expected: at least one percent)");
		}
		for (int i = 0; i < steps.length; i++) {
			// A step of 0% would send the target nothing to judge it by: it would
			// hold for ever.
			if (steps[i] < 1 || steps[i] > 100) {
				throw new IllegalArgumentException(
						"steps: " + Arrays.toString(steps) + " (expected: percents from 1 to 100)");
			}
			if (i > 0 && steps[i] <= steps[i - 1]) {
				throw new IllegalArgumentException(
						"steps: " + Arrays.toString(steps) + " (expected: increasing percents)");
			}
		}
		if (intervalNanos < MIN_INTERVAL_NANOS || intervalNanos > MAX_INTERVAL_NANOS) {
			throw new IllegalArgumentException("interval: " + format(intervalNanos) + " (expected: "
					+ format(MIN_INTERVAL_NANOS) + " to " + format(MAX_INTERVAL_NANOS) + ")");
		}
		if (minRequests < 0 || minRequests > MAX_MIN_REQUESTS) {
			throw new IllegalArgumentException(
					"min-requests: " + minRequests + " (expected: 0 to " + MAX_MIN_REQUESTS + ")");
		}
		if (!(maxErrorRateIncrease >= 0 && maxErrorRateIncrease <= 1)) {
			throw new IllegalArgumentException(
					"max-error-rate-increase: " + maxErrorRateIncrease + " (expected: 0 to 1)");
		}
		// NaN fails both comparisons.
		if (!(maxLatencyRatio >= 1 && maxLatencyRatio <= MAX_LATENCY_RATIO)) {
			throw new IllegalArgumentException(
					"max-latency-ratio: " + maxLatencyRatio + " (expected: 1 to " + MAX_LATENCY_RATIO + ")");
		}
		errorStatuses = (errorStatuses != null) ? IntStream.of(errorStatuses).sorted().distinct().toArray()
				: new int[0];
		for (int status : errorStatuses) {
			if (status < 400 || status > 599) {
				throw new IllegalArgumentException("error-statuses: " + status + " (expected: 400 to 599)");
			}
		}
		if (maxOutcomesPerClient < 0 || maxOutcomesPerClient > MAX_OUTCOMES_PER_CLIENT) {
			throw new IllegalArgumentException("max-outcomes-per-client: " + maxOutcomesPerClient
					+ " (expected: 0 for no limit, up to " + MAX_OUTCOMES_PER_CLIENT + ")");
		}
		if (minClients < 0 || minClients > MAX_MIN_CLIENTS) {
			throw new IllegalArgumentException(
					"min-clients: " + minClients + " (expected: 0 to " + MAX_MIN_CLIENTS + ")");
		}
		if (!(maxMismatchRate >= 0 && maxMismatchRate <= 1)) {
			throw new IllegalArgumentException("max-mismatch-rate: " + maxMismatchRate + " (expected: 0 to 1)");
		}
		if (id == null) {
			id = derivedId(target, steps, intervalNanos, minRequests, maxErrorRateIncrease, maxLatencyRatio,
					errorStatuses, maxOutcomesPerClient, minClients, shadow, maxMismatchRate);
		}
		else if (!isValidId(id)) {
			throw new IllegalArgumentException(
					"id: " + id + " (expected: 1 to " + MAX_ID_LENGTH + " letters, digits, '.', '_' or '-')");
		}
	}

	/**
	 * Creates a plan whose id is derived from the rest of it, with every 5xx an error and
	 * no limit per client: a judgement by the answers alone.
	 * @param target the split target whose share ramps
	 * @param steps the target's percent at each step
	 * @param intervalNanos the time on each step
	 * @param minRequests the fewest canary requests to judge
	 * @param maxErrorRateIncrease the most the error rate may exceed the others'
	 * @param maxLatencyRatio the most the p99 may be, as a multiple of the others'
	 */
	public RolloutPlan(String target, int[] steps, long intervalNanos, long minRequests, double maxErrorRateIncrease,
			double maxLatencyRatio) {
		this(target, steps, intervalNanos, minRequests, maxErrorRateIncrease, maxLatencyRatio, null, null, 0, 0);
	}

	/**
	 * Creates a plan without a shadow stage.
	 * @param target the split target whose share ramps
	 * @param steps the target's percent at each step
	 * @param intervalNanos the time on each step
	 * @param minRequests the fewest canary requests to judge
	 * @param maxErrorRateIncrease the most the error rate may exceed the others'
	 * @param maxLatencyRatio the most the p99 may be, as a multiple of the others'
	 * @param id the rollout's epoch, or {@code null} to derive one
	 * @param errorStatuses the answers that count as errors, empty for every 5xx
	 * @param maxOutcomesPerClient the most answers one client counts for per side
	 * @param minClients the fewest distinct clients a side needs
	 */
	public RolloutPlan(String target, int[] steps, long intervalNanos, long minRequests, double maxErrorRateIncrease,
			double maxLatencyRatio, @Nullable String id, int @Nullable [] errorStatuses, int maxOutcomesPerClient,
			int minClients) {
		this(target, steps, intervalNanos, minRequests, maxErrorRateIncrease, maxLatencyRatio, id, errorStatuses,
				maxOutcomesPerClient, minClients, false, DEFAULT_MAX_MISMATCH_RATE);
	}

	/**
	 * Returns {@code 5m}, {@code 500ms}: nanoseconds in the largest unit that divides
	 * them, as the YAML spells durations.
	 */
	private static String format(long nanos) {
		if (nanos == 0) {
			return "0s";
		}
		long[] units = { Duration.ofDays(1).toNanos(), Duration.ofHours(1).toNanos(), Duration.ofMinutes(1).toNanos(),
				Duration.ofSeconds(1).toNanos(), Duration.ofMillis(1).toNanos() };
		String[] suffixes = { "d", "h", "m", "s", "ms" };
		for (int i = 0; i < units.length; i++) {
			if (nanos % units[i] == 0) {
				return nanos / units[i] + suffixes[i];
			}
		}
		return nanos + "ns";
	}

	/**
	 * Returns whether a text can be a {@code rollout.id}: it travels in every fleet event
	 * and is logged, so it is short and printable.
	 * @param id the text
	 * @return whether it is 1 to {@value #MAX_ID_LENGTH} letters, digits, '.', '_' or '-'
	 */
	public static boolean isValidId(String id) {
		if (id.isEmpty() || id.length() > MAX_ID_LENGTH) {
			return false;
		}
		for (int i = 0; i < id.length(); i++) {
			char c = id.charAt(i);
			boolean allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
					|| c == '_' || c == '-';
			if (!allowed) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The id of a block that sets none: the same on every replica and JVM for the same
	 * keys (the first 8 bytes of a SHA-256 of them, in hex), another one when any key
	 * changes.
	 */
	private static String derivedId(String target, int[] steps, long intervalNanos, long minRequests,
			double maxErrorRateIncrease, double maxLatencyRatio, int[] errorStatuses, int maxOutcomesPerClient,
			int minClients, boolean shadow, double maxMismatchRate) {
		String block = target + " " + Arrays.toString(steps) + " " + intervalNanos + " " + minRequests + " "
				+ maxErrorRateIncrease + " " + maxLatencyRatio + statuses(errorStatuses)
				+ clients(maxOutcomesPerClient, minClients) + shadowing(shadow, maxMismatchRate);
		try {
			byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
				.digest(block.getBytes(java.nio.charset.StandardCharsets.UTF_8));
			return java.util.HexFormat.of().formatHex(digest, 0, 8);
		}
		catch (java.security.NoSuchAlgorithmException ex) {
			// Every JDK has SHA-256 (a required algorithm of the platform).
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public int[] steps() {
		return this.steps.clone();
	}

	@Override
	public int[] errorStatuses() {
		return this.errorStatuses.clone();
	}

	/**
	 * Returns whether an answer counts as an error of the side that gave it.
	 * @param status the answer's status
	 * @return whether it is one of {@code error-statuses}, or a 5xx when they are empty
	 */
	public boolean isError(int status) {
		return (this.errorStatuses.length == 0) ? status >= 500 && status <= 599
				: Arrays.binarySearch(this.errorStatuses, status) >= 0;
	}

	/**
	 * The statuses as the fingerprint and the derived id show them: nothing for the
	 * default, so that a block without the key keeps the id it always had.
	 */
	private static String statuses(int[] errorStatuses) {
		return (errorStatuses.length == 0) ? "" : " errors " + Arrays.toString(errorStatuses);
	}

	/**
	 * The client limits as the fingerprint and the derived id show them: nothing for the
	 * defaults, so that a block without the keys keeps the id and the fingerprint it had
	 * before they existed, and replicas upgraded one by one still recognise each other's
	 * rollout.
	 */
	private static String clients(int maxOutcomesPerClient, int minClients) {
		return (maxOutcomesPerClient == DEFAULT_MAX_OUTCOMES_PER_CLIENT && minClients == DEFAULT_MIN_CLIENTS) ? ""
				: " clients " + maxOutcomesPerClient + "/" + minClients;
	}

	/**
	 * The shadow stage as the fingerprint and the derived id show it: nothing for the
	 * defaults, so that a block without the keys keeps its id and fingerprint.
	 */
	private static String shadowing(boolean shadow, double maxMismatchRate) {
		return (!shadow && maxMismatchRate == DEFAULT_MAX_MISMATCH_RATE) ? ""
				: " shadow " + shadow + "/" + maxMismatchRate;
	}

	int step(int index) {
		return this.steps[index];
	}

	int lastStep() {
		return this.steps.length - 1;
	}

	/**
	 * Returns a text that is equal for equal plans on every replica and JVM: how replicas
	 * tell that a decision about a rollout is about theirs.
	 * @return the fingerprint
	 */
	public String fingerprint() {
		return this.id + " " + this.target + " " + Arrays.toString(this.steps) + " " + this.intervalNanos + "ns "
				+ this.minRequests + " " + this.maxErrorRateIncrease + " " + this.maxLatencyRatio
				+ statuses(this.errorStatuses) + clients(this.maxOutcomesPerClient, this.minClients)
				+ shadowing(this.shadow, this.maxMismatchRate);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof RolloutPlan plan && this.id.equals(plan.id) && this.target.equals(plan.target)
				&& Arrays.equals(this.steps, plan.steps) && this.intervalNanos == plan.intervalNanos
				&& this.minRequests == plan.minRequests
				&& Double.compare(this.maxErrorRateIncrease, plan.maxErrorRateIncrease) == 0
				&& Double.compare(this.maxLatencyRatio, plan.maxLatencyRatio) == 0
				&& Arrays.equals(this.errorStatuses, plan.errorStatuses)
				&& this.maxOutcomesPerClient == plan.maxOutcomesPerClient && this.minClients == plan.minClients
				&& this.shadow == plan.shadow && Double.compare(this.maxMismatchRate, plan.maxMismatchRate) == 0;
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.id, this.target, Arrays.hashCode(this.steps), this.intervalNanos, this.minRequests,
				this.maxErrorRateIncrease, this.maxLatencyRatio, Arrays.hashCode(this.errorStatuses),
				this.maxOutcomesPerClient, this.minClients, this.shadow, this.maxMismatchRate);
	}

	@Override
	public String toString() {
		return "Plan[" + this.id + " " + this.target + " " + Arrays.toString(this.steps) + "]";
	}

}
