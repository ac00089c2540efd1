package dev.gatewaylb.internal.rollout;

import dev.gatewaylb.rollout.RolloutAction;

import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

/**
 * A progressive rollout of one split target, as pure decisions: which step it is on, when
 * that step is judged, and what a judgement of the canary against the split's other
 * targets over the step's interval makes of it. Time is a caller's monotonic clock in
 * nanoseconds; nothing here reads a clock, keeps counters or schedules anything, so every
 * transition can be tested as a function.
 * <p>
 * A step's interval is judged once it has passed: with fewer than {@code min-requests}
 * canary requests, or requests from fewer than {@code min-clients} distinct clients, the
 * step stays and is judged again an interval later (its counts go on accumulating); the
 * other targets are the baseline when they have as many requests and clients too (else
 * the canary's error rate is held against 0 and its latency is not judged: a step at 100%
 * leaves them none); a canary whose error rate exceeds the others' by more than
 * {@code max-error-rate-increase}, or whose p99 is more than {@code max-latency-ratio}
 * times theirs, is rolled back at once (share 0) with the reason; otherwise the rollout
 * moves to the next step, and after the last one it is promoted. A paused rollout keeps
 * its step and is not judged; resuming starts a fresh interval.
 * <p>
 * A judgement says what it decided ({@link Judgement.Kind}), not due included, so that
 * the runner never has to tell "nothing happened" from the identity of what it got back.
 */
public final class Rollout {

	/**
	 * Where a rollout stands.
	 */
	public enum State {

		/**
		 * Before the first step, with {@code shadow}: the target gets none of the split's
		 * traffic but a mirror of it, and moves to its first step once enough mirrored
		 * answers match the primary's.
		 */
		SHADOWING("shadowing"),

		/**
		 * On a step, to be judged at the end of its interval.
		 */
		PROGRESSING("progressing"),

		/**
		 * On a step, not judged until resumed.
		 */
		PAUSED("paused"),

		/**
		 * Done: the target keeps the last step's share.
		 */
		PROMOTED("promoted"),

		/**
		 * Stopped by a judgement or an operator: the target's share is 0.
		 */
		ROLLED_BACK("rolled-back");

		private final String label;

		State(String label) {
			this.label = label;
		}

		/**
		 * Returns the state as the actuator shows it.
		 * @return the label
		 */
		public String label() {
			return this.label;
		}

	}

	/**
	 * What a rollout does.
	 *
	 * @param target the split target whose share ramps
	 * @param steps the target's percent of the split's traffic at each step, increasing,
	 * each 1 to 100
	 * @param intervalNanos the time on each step before it is judged
	 * @param minRequests the fewest canary requests an interval must have to be judged
	 * @param maxErrorRateIncrease the most the canary's error rate may exceed the others'
	 * @param maxLatencyRatio the most the canary's p99 may be, as a multiple of the
	 * others'
	 * @param id the rollout's epoch ({@code rollout.id}): replicas act on each other's
	 * decisions only for the same id, so an operator who runs the same block again after
	 * a roll-back gives it a new one; {@code null} derives one from the rest of the plan
	 * @param errorStatuses the answers that count as the canary's (or the others')
	 * errors, 400 to 599, sorted; empty for every 5xx ({@code rollout.error-statuses},
	 * independent of passive health's {@code on-statuses})
	 * @param maxOutcomesPerClient the most answers one client counts for on each side per
	 * interval ({@code rollout.max-outcomes-per-client}), 0 for no limit: one client
	 * cannot fill {@code min-requests} or outweigh the others
	 * @param minClients the fewest distinct clients a side's answers must come from to be
	 * judged ({@code rollout.min-clients}), 0 for any
	 * @param shadow whether the rollout starts with a shadow stage
	 * ({@code rollout.shadow})
	 * @param maxMismatchRate the most the shadow stage's mirrored answers may differ from
	 * the primary's ({@code rollout.max-mismatch-rate}), 0 to 1
	 */
	public record Plan(String target, int[] steps, long intervalNanos, long minRequests, double maxErrorRateIncrease,
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

		public Plan {
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
			if (intervalNanos < 1_000_000_000L) {
				throw new IllegalArgumentException(
						"interval: " + intervalNanos / 1_000_000 + "ms (expected: at least 1s)");
			}
			if (minRequests < 0) {
				throw new IllegalArgumentException("min-requests: " + minRequests + " (expected: >= 0)");
			}
			if (!(maxErrorRateIncrease >= 0 && maxErrorRateIncrease <= 1)) {
				throw new IllegalArgumentException(
						"max-error-rate-increase: " + maxErrorRateIncrease + " (expected: 0 to 1)");
			}
			if (!(maxLatencyRatio >= 1 && Double.isFinite(maxLatencyRatio))) {
				throw new IllegalArgumentException("max-latency-ratio: " + maxLatencyRatio + " (expected: >= 1)");
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
		 * Creates a plan whose id is derived from the rest of it, with every 5xx an error
		 * and no limit per client: a judgement by the answers alone.
		 * @param target the split target whose share ramps
		 * @param steps the target's percent at each step
		 * @param intervalNanos the time on each step
		 * @param minRequests the fewest canary requests to judge
		 * @param maxErrorRateIncrease the most the error rate may exceed the others'
		 * @param maxLatencyRatio the most the p99 may be, as a multiple of the others'
		 */
		public Plan(String target, int[] steps, long intervalNanos, long minRequests, double maxErrorRateIncrease,
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
		public Plan(String target, int[] steps, long intervalNanos, long minRequests, double maxErrorRateIncrease,
				double maxLatencyRatio, @Nullable String id, int @Nullable [] errorStatuses, int maxOutcomesPerClient,
				int minClients) {
			this(target, steps, intervalNanos, minRequests, maxErrorRateIncrease, maxLatencyRatio, id, errorStatuses,
					maxOutcomesPerClient, minClients, false, DEFAULT_MAX_MISMATCH_RATE);
		}

		/**
		 * Returns whether a text can be a {@code rollout.id}: it travels in every fleet
		 * event and is logged, so it is short and printable.
		 * @param id the text
		 * @return whether it is 1 to {@value #MAX_ID_LENGTH} letters, digits, '.', '_' or
		 * '-'
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
		 * The id of a block that sets none: the same on every replica and JVM for the
		 * same keys (the first 8 bytes of a SHA-256 of them, in hex), another one when
		 * any key changes.
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
		 * @return whether it is one of {@code error-statuses}, or a 5xx when they are
		 * empty
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
		 * The client limits as the fingerprint and the derived id show them: nothing for
		 * the defaults, so that a block without the keys keeps the id and the fingerprint
		 * it had before they existed, and replicas upgraded one by one still recognise
		 * each other's rollout.
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
		 * Returns a text that is equal for equal plans on every replica and JVM: how
		 * replicas tell that a decision about a rollout is about theirs.
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
			return other instanceof Plan plan && this.id.equals(plan.id) && this.target.equals(plan.target)
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

	/**
	 * What one side of the comparison did over an interval.
	 *
	 * @param requests requests answered and counted (at most
	 * {@code max-outcomes-per-client} of each client's per interval)
	 * @param errors of them, errors: a status of the plan's {@code error-statuses}, a
	 * connection failure or timeout, the gateway's own 503 for the side
	 * @param p99Nanos their 99th percentile latency, 0 when there were none
	 * @param clients the distinct clients they came from
	 */
	public record Window(long requests, long errors, long p99Nanos, long clients) {

		double errorRate() {
			return (this.requests == 0) ? 0 : (double) this.errors / this.requests;
		}

		/**
		 * Returns whether the side has enough answers, from enough clients, to be judged
		 * by.
		 */
		boolean isJudgeable(Plan plan) {
			return this.requests >= plan.minRequests() && this.clients >= plan.minClients();
		}

	}

	/**
	 * Where a rollout stands.
	 *
	 * @param state the state
	 * @param step the index of the step in force (the last for promoted, the one it was
	 * on for rolled back)
	 * @param percent the target's share of the split's traffic now
	 * @param judgeAtNanos when the step is judged, for progressing; 0 otherwise
	 * @param reason why it was rolled back, or {@code null}
	 */
	public record Status(State state, int step, int percent, long judgeAtNanos, @Nullable String reason) {
	}

	private Rollout() {
	}

	/**
	 * Starts a rollout: on its shadow stage when it has one, else on its first step.
	 * @param plan the plan
	 * @param nowNanos the clock's current time
	 * @return shadowing at 0%, or progressing on step 0
	 */
	public static Status start(Plan plan, long nowNanos) {
		if (plan.shadow()) {
			return new Status(State.SHADOWING, 0, 0, 0, null);
		}
		return new Status(State.PROGRESSING, 0, plan.step(0), nowNanos + plan.intervalNanos(), null);
	}

	/**
	 * Judges a rollout's shadow stage by its mirrored answers so far: once there are
	 * {@code min-requests} of them, it moves to its first step when the share that
	 * differed from the primary's is at most {@code max-mismatch-rate}, and is rolled
	 * back otherwise.
	 * @param plan the plan
	 * @param status where it stands
	 * @param compared mirrored answers compared with the primary's
	 * @param mismatched of them, those that differed
	 * @param nowNanos the clock's current time
	 * @return {@link Judgement.Kind#NOT_DUE} with {@code status} itself while it is not
	 * shadowing or has too few answers; {@link Judgement.Kind#NEXT} onto the first step;
	 * or {@link Judgement.Kind#ROLLED_BACK}
	 */
	public static Judgement judgeShadow(Plan plan, Status status, long compared, long mismatched, long nowNanos) {
		if (status.state() != State.SHADOWING || compared < Math.max(1, plan.minRequests())) {
			return new Judgement(Judgement.Kind.NOT_DUE, status);
		}
		double rate = (double) mismatched / compared;
		if (rate > plan.maxMismatchRate()) {
			return new Judgement(Judgement.Kind.ROLLED_BACK,
					rolledBack(status, String.format(Locale.ROOT,
							"mismatch rate %.4f of %d mirrored answers in the shadow stage" + " (max-mismatch-rate %s)",
							rate, compared, plan.maxMismatchRate())));
		}
		return new Judgement(Judgement.Kind.NEXT,
				new Status(State.PROGRESSING, 0, plan.step(0), nowNanos + plan.intervalNanos(), null));
	}

	/**
	 * Judges a progressing rollout whose interval has passed.
	 * @param plan the plan
	 * @param status where it stands
	 * @param canary what the target did over the interval
	 * @param others what the split's other targets did over the same interval
	 * @param nowNanos the clock's current time
	 * @return what was decided and where it stands now: {@link Judgement.Kind#NOT_DUE}
	 * with {@code status} itself when the rollout is not progressing or its interval has
	 * not passed
	 */
	public static Judgement judge(Plan plan, Status status, Window canary, Window others, long nowNanos) {
		if (status.state() != State.PROGRESSING || nowNanos - status.judgeAtNanos() < 0) {
			return new Judgement(Judgement.Kind.NOT_DUE, status);
		}
		if (!canary.isJudgeable(plan)) {
			return new Judgement(Judgement.Kind.HOLD, new Status(State.PROGRESSING, status.step(), status.percent(),
					nowNanos + plan.intervalNanos(), null));
		}
		// The other targets are a baseline only with as many requests and clients as the
		// canary needs: at a step of 100% they get none but the stragglers of the step
		// before, and a handful of answers, or one client's, says nothing of their error
		// rate or p99. Without a baseline the canary's error rate is held against 0 and
		// its latency is not judged.
		boolean baseline = others.requests() >= 1 && others.isJudgeable(plan);
		double othersErrorRate = baseline ? others.errorRate() : 0;
		double increase = canary.errorRate() - othersErrorRate;
		if (increase > plan.maxErrorRateIncrease()) {
			return new Judgement(Judgement.Kind.ROLLED_BACK,
					rolledBack(status,
							String.format(Locale.ROOT,
									"error rate %.4f against %.4f of the other targets (max-error-rate-increase %s)",
									canary.errorRate(), othersErrorRate, plan.maxErrorRateIncrease())));
		}
		if (baseline && others.p99Nanos() > 0 && canary.p99Nanos() > plan.maxLatencyRatio() * others.p99Nanos()) {
			return new Judgement(Judgement.Kind.ROLLED_BACK,
					rolledBack(status,
							String.format(Locale.ROOT,
									"p99 %.1f ms against %.1f ms of the other targets (max-latency-ratio %s)",
									canary.p99Nanos() / 1e6, others.p99Nanos() / 1e6, plan.maxLatencyRatio())));
		}
		if (status.step() == plan.lastStep()) {
			return new Judgement(Judgement.Kind.PROMOTED,
					new Status(State.PROMOTED, status.step(), status.percent(), 0, null));
		}
		int next = status.step() + 1;
		return new Judgement(Judgement.Kind.NEXT,
				new Status(State.PROGRESSING, next, plan.step(next), nowNanos + plan.intervalNanos(), null));
	}

	/**
	 * Returns why a judgement held a step, as its verdict says.
	 * @param plan the plan
	 * @param canary what the target did over the judged interval
	 * @return the reason, with what the canary had against what it needs
	 */
	static String holdReason(Plan plan, Window canary) {
		if (canary.requests() < plan.minRequests()) {
			return "fewer than min-requests canary requests (" + canary.requests() + " of " + plan.minRequests()
					+ ", from " + canary.clients() + " clients)";
		}
		return "canary requests from fewer than min-clients clients (" + canary.clients() + " of " + plan.minClients()
				+ ")";
	}

	/**
	 * Applies an operator's action, or another replica's.
	 * @param plan the plan
	 * @param status where it stands
	 * @param action the action
	 * @param reason why, for a roll-back, as the actuator shows it
	 * @param nowNanos the clock's current time
	 * @return where it stands now; an equal status when the action changes nothing (see
	 * {@link #pause}, {@link #resume}, {@link #promote}, {@link #rollBack})
	 */
	public static Status act(Plan plan, Status status, RolloutAction action, String reason, long nowNanos) {
		return switch (action) {
			case PAUSE -> pause(status);
			case RESUME -> resume(plan, status, nowNanos);
			case PROMOTE -> promote(plan, status);
			case ROLL_BACK -> rollBack(status, reason);
		};
	}

	/**
	 * Pauses a progressing rollout on its step.
	 * @param status where it stands
	 * @return paused, or unchanged if not progressing
	 */
	public static Status pause(Status status) {
		return (status.state() != State.PROGRESSING) ? status
				: new Status(State.PAUSED, status.step(), status.percent(), 0, null);
	}

	/**
	 * Resumes a paused rollout on its step, with a fresh interval: what happened while it
	 * was paused is not judged.
	 * @param plan the plan
	 * @param status where it stands
	 * @param nowNanos the clock's current time
	 * @return progressing, or unchanged if not paused
	 */
	public static Status resume(Plan plan, Status status, long nowNanos) {
		return (status.state() != State.PAUSED) ? status
				: new Status(State.PROGRESSING, status.step(), status.percent(), nowNanos + plan.intervalNanos(), null);
	}

	/**
	 * Promotes a rollout now, whatever its step: the target gets the last step's share.
	 * @param plan the plan
	 * @param status where it stands
	 * @return promoted, or unchanged if rolled back (a rolled-back rollout starts again
	 * only through a refresh)
	 */
	public static Status promote(Plan plan, Status status) {
		return (status.state() == State.ROLLED_BACK) ? status
				: new Status(State.PROMOTED, plan.lastStep(), plan.step(plan.lastStep()), 0, null);
	}

	/**
	 * Rolls a rollout back now, by an operator.
	 * @param status where it stands
	 * @param reason why, as the actuator shows it
	 * @return rolled back, or unchanged if already rolled back
	 */
	public static Status rollBack(Status status, String reason) {
		return (status.state() == State.ROLLED_BACK) ? status : rolledBack(status, reason);
	}

	private static Status rolledBack(Status status, String reason) {
		return new Status(State.ROLLED_BACK, status.step(), 0, 0, reason);
	}

}
