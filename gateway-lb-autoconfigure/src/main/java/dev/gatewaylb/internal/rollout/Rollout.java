package dev.gatewaylb.internal.rollout;

import dev.gatewaylb.rollout.RolloutAction;

import java.util.Locale;

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
		 * traffic but a copy of it, and moves to its first step once enough copied
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
	 * What one side of the comparison did over an interval.
	 *
	 * @param requests requests answered and counted (at most
	 * {@code max-outcomes-per-client} of each client's per interval)
	 * @param errors of them, errors: a status of the plan's {@code error-statuses}, a
	 * connection failure or timeout, the gateway's own 503 for the side
	 * @param p99Nanos their 99th percentile latency, 0 when there were none
	 * @param clients the distinct clients they came from
	 * @param topClientRequests the requests of the client with the most errors
	 * @param topClientErrors that client's errors
	 */
	public record Window(long requests, long errors, long p99Nanos, long clients, long topClientRequests,
			long topClientErrors) {

		/**
		 * A window whose clients' shares are not known: none is left out.
		 * @param requests requests answered and counted
		 * @param errors of them, errors
		 * @param p99Nanos their 99th percentile latency
		 * @param clients the distinct clients they came from
		 */
		public Window(long requests, long errors, long p99Nanos, long clients) {
			this(requests, errors, p99Nanos, clients, 0, 0);
		}

		double errorRate() {
			return (this.requests == 0) ? 0 : (double) this.errors / this.requests;
		}

		/**
		 * Returns the error rate without the client that failed most: the rate a verdict
		 * is decided by, so that no one client (one that provokes 500s, one with a broken
		 * browser, one that forges nothing but keeps its address) moves it alone. A
		 * release that fails for everyone fails without any one of them too. A side heard
		 * from one client only is judged by it.
		 */
		double errorRateWithoutTopClient() {
			if (this.clients <= 1) {
				// One client is all there is (a demo's min-clients: 1): its answers are
				// the
				// verdict's.
				return errorRate();
			}
			long requests = this.requests - this.topClientRequests;
			return (requests <= 0) ? 0 : (double) (this.errors - this.topClientErrors) / requests;
		}

		/**
		 * Returns whether the side has enough answers, from enough clients, to be judged
		 * by.
		 */
		boolean isJudgeable(RolloutPlan plan) {
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
	public static Status start(RolloutPlan plan, long nowNanos) {
		if (plan.shadow()) {
			return new Status(State.SHADOWING, 0, 0, 0, null);
		}
		return new Status(State.PROGRESSING, 0, plan.step(0), nowNanos + plan.intervalNanos(), null);
	}

	/**
	 * Judges a rollout's shadow stage by its copied answers so far: once there are
	 * {@code min-requests} of them from at least {@code min-clients} clients (each client
	 * counted for at most {@code max-outcomes-per-client}), it moves to its first step
	 * when the share that differed from the primary's is at most
	 * {@code max-mismatch-rate}, and is rolled back otherwise. So one client's mismatches
	 * can neither decide nor fill the stage.
	 * @param plan the plan
	 * @param status where it stands
	 * @param compared the copied answers compared with the primary's (requests), those
	 * that differed (errors), and the clients they came from
	 * @param nowNanos the clock's current time
	 * @return {@link Judgement.Kind#NOT_DUE} with {@code status} itself while it is not
	 * shadowing or has too few answers or clients; {@link Judgement.Kind#NEXT} onto the
	 * first step; or {@link Judgement.Kind#ROLLED_BACK}
	 */
	public static Judgement judgeShadow(RolloutPlan plan, Status status, Window compared, long nowNanos) {
		if (status.state() != State.SHADOWING || compared.requests() < Math.max(1, plan.minRequests())
				|| compared.clients() < plan.minClients()) {
			return new Judgement(Judgement.Kind.NOT_DUE, status);
		}
		// Without the client whose answers differed most: one client alone cannot roll
		// the stage back.
		double rate = compared.errorRateWithoutTopClient();
		if (rate > plan.maxMismatchRate()) {
			return new Judgement(Judgement.Kind.ROLLED_BACK,
					rolledBack(status, String.format(Locale.ROOT,
							"mismatch rate %.4f of %d compared answers from %d clients in the shadow stage, without"
									+ " its most differing client (max-mismatch-rate %s)",
							rate, compared.requests(), compared.clients(), plan.maxMismatchRate())));
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
	public static Judgement judge(RolloutPlan plan, Status status, Window canary, Window others, long nowNanos) {
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
		// Each side without the client that failed most on it: one client alone can
		// neither roll a healthy canary back nor hide a failing one behind a baseline it
		// made fail.
		double othersErrorRate = baseline ? others.errorRateWithoutTopClient() : 0;
		double canaryErrorRate = canary.errorRateWithoutTopClient();
		double increase = canaryErrorRate - othersErrorRate;
		if (increase > plan.maxErrorRateIncrease()) {
			return new Judgement(Judgement.Kind.ROLLED_BACK,
					rolledBack(status, String.format(Locale.ROOT,
							"error rate %.4f against %.4f of the other targets, each without its most failing client"
									+ " (max-error-rate-increase %s)",
							canaryErrorRate, othersErrorRate, plan.maxErrorRateIncrease())));
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
	static String holdReason(RolloutPlan plan, Window canary) {
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
	public static Status act(RolloutPlan plan, Status status, RolloutAction action, String reason, long nowNanos) {
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
	public static Status resume(RolloutPlan plan, Status status, long nowNanos) {
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
	public static Status promote(RolloutPlan plan, Status status) {
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
