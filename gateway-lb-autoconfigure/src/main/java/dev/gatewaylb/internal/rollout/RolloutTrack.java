package dev.gatewaylb.internal.rollout;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One split's rollout: its plan, where it stands, the two sides of its comparison and its
 * latest verdicts. Written on the control thread only, by {@link SplitRollouts}; every
 * field another thread reads is volatile. The request path reads {@link #layout()} and
 * {@link #window(boolean)}: volatile reads, no lock.
 */
public final class RolloutTrack {

	/**
	 * How many verdicts a rollout keeps.
	 */
	static final int VERDICTS_KEPT = 20;

	private final String split;

	/**
	 * The plan, replaced by an equal one when a refresh keeps the rollout.
	 */
	private volatile RolloutPlan plan;

	private final RolloutWindow canary;

	private final RolloutWindow others;

	private volatile Rollout.Status status;

	private volatile int layout;

	private volatile boolean judging;

	/**
	 * Whether the rollout is in its shadow stage, so that requests of the split are
	 * copied to its target; and the copied answers compared so far, and those that
	 * differed. Added to by the request path, read by the control thread.
	 */
	private volatile boolean shadowing;

	/**
	 * The shadow stage's comparisons: each client counts for at most
	 * {@code max-outcomes-per-client} of them, and the stage counts the clients, so that
	 * one client's mismatches can neither fill {@code min-requests} nor decide it.
	 */
	private final RolloutWindow shadow;

	private volatile Windows current = Windows.EMPTY;

	private volatile List<Verdict> verdicts = List.of();

	/**
	 * Whether the rollout waits for the peers' state; read by the fleet's bus thread.
	 */
	private volatile boolean awaitingPeers;

	/**
	 * Until when, on the control thread's clock, it waits. Control thread only.
	 */
	private long awaitPeersUntil;

	/**
	 * Whether the promotion was logged. Control thread only.
	 */
	private boolean promotionLogged;

	RolloutTrack(String split, RolloutPlan plan, Rollout.Status status) {
		this.split = split;
		this.plan = plan;
		// A refresh that keeps the rollout gives it an equal plan: the same
		// error-statuses.
		this.canary = new RolloutWindow(plan);
		this.others = new RolloutWindow(plan);
		this.shadow = new RolloutWindow(plan);
		this.status = status;
		this.layout = layoutOf(plan, status);
		this.judging = status.state() == Rollout.State.PROGRESSING;
		this.shadowing = status.state() == Rollout.State.SHADOWING;
	}

	/**
	 * Returns the layout a status routes by: its step's, or the target at 0% for a
	 * rollout rolled back or in its shadow stage.
	 */
	private static int layoutOf(RolloutPlan plan, Rollout.Status status) {
		Rollout.State state = status.state();
		return (state == Rollout.State.ROLLED_BACK || state == Rollout.State.SHADOWING) ? plan.steps().length
				: status.step();
	}

	/**
	 * Returns whether the rollout is in its shadow stage: the split's requests are copied
	 * to its target, which gets none of them.
	 * @return whether shadowing
	 */
	public boolean shadowing() {
		return this.shadowing;
	}

	/**
	 * Counts a copied answer of the shadow stage compared with the primary's, within its
	 * client's share.
	 * @param client the hash of the client's identity, as the split's sides take it
	 * @param mismatch whether it differed
	 */
	public void shadowAnswered(int client, boolean mismatch) {
		this.shadow.compared(client, mismatch);
	}

	/**
	 * Returns the shadow stage's comparisons so far, each client within its share: the
	 * window's requests are the answers compared, its errors those that differed.
	 * @return the counts
	 */
	public Rollout.Window shadowCompared() {
		return this.shadow.window();
	}

	/**
	 * Returns whether this is the rollout of a plan the settings carry: the same instance
	 * once the control thread has applied the settings (one reference comparison), an
	 * equal one in the moment before.
	 * @param plan the settings' plan
	 * @return whether the plan is this rollout's
	 */
	public boolean isOf(RolloutPlan plan) {
		RolloutPlan own = this.plan;
		return own == plan || own.equals(plan);
	}

	/**
	 * Returns the index of the layout in force among the split's rollout layouts: one per
	 * step, then the target at 0%.
	 * @return a step's index, or the number of steps when rolled back
	 */
	public int layout() {
		return this.layout;
	}

	/**
	 * Returns where a request to a target of the split records its outcome.
	 * @param canary whether the request went to the rollout's target
	 * @return the side, or {@code null} when the step is not being judged
	 */
	public @Nullable RolloutWindow window(boolean canary) {
		if (!this.judging) {
			return null;
		}
		return canary ? this.canary : this.others;
	}

	/**
	 * Returns the split's name as configured.
	 * @return the name
	 */
	public String split() {
		return this.split;
	}

	/**
	 * Returns the plan.
	 * @return the plan
	 */
	public RolloutPlan plan() {
		return this.plan;
	}

	/**
	 * Returns where the rollout stands.
	 * @return the status
	 */
	public Rollout.Status status() {
		return this.status;
	}

	/**
	 * Returns what both sides did on the step so far, as of the last tick.
	 * @return the windows
	 */
	public Windows current() {
		return this.current;
	}

	/**
	 * Returns the latest verdicts, oldest first.
	 * @return at most {@value #VERDICTS_KEPT} verdicts
	 */
	public List<Verdict> verdicts() {
		return this.verdicts;
	}

	/**
	 * Returns whether the rollout, started with the replica, still waits for its peers to
	 * tell where the fleet has it (paused on its first step meanwhile).
	 * @return whether it waits
	 */
	public boolean awaitsPeers() {
		return this.awaitingPeers;
	}

	// Control thread only, below.

	long awaitPeersUntil() {
		return this.awaitPeersUntil;
	}

	/**
	 * Waits for the peers' state until the given time.
	 */
	void awaitPeers(long untilNanos) {
		this.awaitPeersUntil = untilNanos;
		this.awaitingPeers = true;
	}

	/**
	 * Stops waiting for the peers' state.
	 */
	void stopAwaitingPeers() {
		this.awaitingPeers = false;
	}

	/**
	 * Returns {@code true} the first time it is asked: whether the promotion is still to
	 * be logged.
	 */
	boolean firstPromotion() {
		if (this.promotionLogged) {
			return false;
		}
		this.promotionLogged = true;
		return true;
	}

	void keep(RolloutPlan equal) {
		this.plan = equal;
	}

	boolean isJudging() {
		return this.judging;
	}

	/**
	 * Drains both sides and returns what they did on the step so far.
	 */
	Windows drain() {
		this.canary.drain();
		this.others.drain();
		Windows windows = new Windows(this.canary.window(), this.others.window());
		this.current = windows;
		return windows;
	}

	/**
	 * Stays on the step with a new judgement time; the step's counts go on accumulating,
	 * and each client may count for as many answers again in the new interval.
	 */
	void hold(Rollout.Status next) {
		this.canary.nextInterval();
		this.others.nextInterval();
		this.status = next;
	}

	/**
	 * Puts a new status in force: a new step, a pause, a resumption or an end, with fresh
	 * counts. Requests routed by the previous step's layout and still on their way record
	 * into the fresh counts, as do requests that read the layout index just before it
	 * changed: a few answers at the start of an interval, which a judgement over the
	 * whole interval does not feel. The reset of the two sides is not atomic either; a
	 * racing attempt may be counted on one and not the other, equally rare. The status is
	 * written last: whoever reads it (the actuator, a test) then also reads the layout it
	 * implies, so a rollout shown as rolled back routes nobody to the canary any more.
	 */
	void enter(Rollout.Status next) {
		this.canary.reset();
		this.others.reset();
		this.current = Windows.EMPTY;
		this.layout = layoutOf(this.plan, next);
		this.judging = next.state() == Rollout.State.PROGRESSING;
		if (next.state() == Rollout.State.SHADOWING) {
			this.shadow.reset();
		}
		this.shadowing = next.state() == Rollout.State.SHADOWING;
		this.status = next;
	}

	void verdict(Verdict verdict) {
		List<Verdict> kept = new ArrayList<>(this.verdicts);
		kept.add(verdict);
		if (kept.size() > VERDICTS_KEPT) {
			kept.remove(0);
		}
		this.verdicts = List.copyOf(kept);
	}

	/**
	 * What the target and the other targets did on a step so far.
	 *
	 * @param canary the rollout's target
	 * @param others the split's other targets
	 */
	public record Windows(Rollout.Window canary, Rollout.Window others) {

		static final Windows EMPTY = new Windows(new Rollout.Window(0, 0, 0, 0), new Rollout.Window(0, 0, 0, 0));

	}

}
