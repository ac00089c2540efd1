package dev.gatewaylb.internal.rollout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.gatewaylb.internal.control.ControlEvents;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.rollout.RolloutAction;
import org.jspecify.annotations.Nullable;

/**
 * Runs every split's rollout: starts it when the plans in force bring or change it,
 * judges each step when its interval has passed ({@link Rollout#judge}), and applies what
 * an operator, or another replica, asks.
 * <p>
 * Everything that changes a rollout runs on the control thread, so its decisions need no
 * lock and a judgement never runs on an event loop. The request path reads a
 * {@link RolloutTrack} ({@link #track(String, RolloutPlan)}): one map read, then three
 * volatile reads (its plan, compared by reference with the settings', the layout index of
 * the step, and whether the step is being judged and so records outcomes). A step changes
 * the layout by an index into layouts the settings derived when they were bound: nothing
 * is built when a step is taken.
 */
public final class SplitRollouts {

	/**
	 * How often the control thread looks for a step whose interval has passed: a step is
	 * judged at most this late.
	 */
	public static final Duration TICK = Duration.ofMillis(250);

	private final ControlEvents events;

	/**
	 * The longest an operator's action waits for the control thread.
	 */
	static final Duration ACTION_TIMEOUT = Duration.ofSeconds(10);

	private static final System.Logger logger = System.getLogger(SplitRollouts.class.getName());

	/**
	 * The reason of a rollout's first verdict while it waits for the peers' state.
	 */
	static final String AWAITING_PEERS = "paused until a peer tells its state in the fleet, one interval at most";

	private final ControlThread control;

	private final Separately separately = new Separately("rollout-tick");

	private final LongSupplier epochMillis;

	/**
	 * The fleet's channel, looked up when a decision is taken (rarely, on the control
	 * thread): the channel follows other replicas' decisions through this registry, so it
	 * cannot be given to it when it is created.
	 */
	private final Supplier<FleetDecisions> fleet;

	/**
	 * The rollouts by split name, as configured.
	 */
	private final Map<String, RolloutTrack> tracks = new ConcurrentHashMap<>();

	/**
	 * Transitions by split name, kept while the split has a rollout, across restarts, so
	 * that the counters a meter reads only grow.
	 */
	private final Map<String, Map<Rollout.State, AtomicLong>> transitions = new ConcurrentHashMap<>();

	private volatile ControlThread.@Nullable Job ticks;

	/**
	 * Whether plans were put in force before: only the rollouts of the first plans, at
	 * start-up, wait for the peers' state. Control thread only.
	 */
	private boolean planned;

	/**
	 * Creates the runner; no rollout is judged until {@link #start()}.
	 * @param control the control thread, whose clock the plans' intervals are measured by
	 * @param epochMillis the wall clock, for the times verdicts are shown with
	 * @param fleet the channel that tells the fleet of this replica's decisions,
	 * {@link FleetDecisions#NONE} for a gateway on its own
	 */
	public SplitRollouts(ControlThread control, LongSupplier epochMillis, Supplier<FleetDecisions> fleet) {
		this(control, epochMillis, fleet, ControlEvents.NONE);
	}

	/**
	 * Creates the runner of a gateway whose verdicts are heard.
	 * @param control as above
	 * @param epochMillis as above
	 * @param fleet as above
	 * @param events hears every verdict
	 */
	public SplitRollouts(ControlThread control, LongSupplier epochMillis, Supplier<FleetDecisions> fleet,
			ControlEvents events) {
		this.events = events;
		this.control = Objects.requireNonNull(control, "control");
		this.epochMillis = Objects.requireNonNull(epochMillis, "epochMillis");
		this.fleet = Objects.requireNonNull(fleet, "fleet");
	}

	/**
	 * Starts the {@code rollout-tick} job, every {@link #TICK}; idempotent.
	 */
	public synchronized void start() {
		if (this.ticks == null) {
			this.ticks = this.control.every("rollout-tick", TICK, this::tick);
		}
	}

	/**
	 * Puts the plans of the settings now in force in force, on the control thread: a
	 * rollout whose plan is unchanged keeps its state, one whose plan is new or changed
	 * starts on its first step, one whose split has no plan any more is forgotten.
	 * @param plans the rollout plans by split name, as configured
	 */
	public void plans(Map<String, RolloutPlan> plans) {
		Map<String, RolloutPlan> copy = Map.copyOf(plans);
		this.control.execute(() -> apply(copy));
	}

	/**
	 * Returns the rollout of a split's plan: the request path. A refresh puts its
	 * settings in force a moment before the control thread has started or kept their
	 * rollout: until it has, a rollout of another plan is not theirs, and {@code null}
	 * says to take the first step's layout, unjudged. A rollout of an equal plan has as
	 * many steps, so its layout index is always one of the settings' layouts.
	 * @param split the split's name as configured
	 * @param plan the split's plan in the settings the request reads, or {@code null}
	 * @return the rollout, or {@code null} when the split has none or it has not started
	 */
	public @Nullable RolloutTrack track(String split, @Nullable RolloutPlan plan) {
		if (plan == null) {
			return null;
		}
		RolloutTrack track = this.tracks.get(split);
		return (track != null && track.isOf(plan)) ? track : null;
	}

	/**
	 * Returns the rollout of a split by name, whatever its plan.
	 * @param split the split's name as configured
	 * @return the rollout, or {@code null} when the split has none
	 */
	public @Nullable RolloutTrack track(String split) {
		return this.tracks.get(split);
	}

	/**
	 * Returns the target's share of a split's traffic now, for the meter.
	 * @param split the split's name as configured
	 * @return the percent, or NaN when the split has no rollout
	 */
	public double percent(String split) {
		RolloutTrack track = this.tracks.get(split);
		return (track != null) ? track.status().percent() : Double.NaN;
	}

	/**
	 * Returns how many times a split's rollout entered a state (a new step counts as
	 * entering {@code progressing}).
	 * @param split the split's name as configured
	 * @param state the state entered
	 * @return the count
	 */
	public long transitions(String split, Rollout.State state) {
		Map<Rollout.State, AtomicLong> counts = this.transitions.get(split);
		return (counts != null) ? counts.get(state).get() : 0;
	}

	/**
	 * Applies an operator's action to a split's rollout on the control thread, waits for
	 * it, and tells the fleet. Blocks: not for event loops.
	 * @param split the split's name, in any case
	 * @param action the action
	 * @return the rollout after the action, or {@code null} when the split has none
	 * @throws IllegalStateException when the control thread did not apply it in time
	 */
	public @Nullable RolloutTrack act(String split, RolloutAction action) {
		try {
			return this.control.call(ACTION_TIMEOUT, () -> {
				RolloutTrack track = find(split);
				if (track != null) {
					apply(track, action, "by an operator", true);
				}
				return track;
			});
		}
		catch (IllegalStateException ex) {
			throw new IllegalStateException("could not apply " + action.label() + " to the rollout of " + split, ex);
		}
	}

	/**
	 * Follows a decision another replica took, on the control thread: the same action,
	 * with the other replica named in the reason, told to nobody. A decision about
	 * another plan (the replicas' rollout blocks or ids differ) or a split without a
	 * rollout is ignored, and so is a judgement's roll-back of a promoted rollout: a
	 * replica that judged a roll-back on a few requests, or an event that arrives late,
	 * must not send the whole fleet back to the old version after a promotion. Only an
	 * operator's roll-back undoes one.
	 * @param split the split's name
	 * @param plan the fingerprint of the plan decided on
	 * @param action the action
	 * @param reason why, as the other replica said
	 * @param origin the other replica
	 * @param byOperator whether an operator asked for it
	 */
	public void follow(String split, String plan, RolloutAction action, @Nullable String reason, String origin,
			boolean byOperator) {
		this.control.execute(() -> {
			RolloutTrack track = find(split);
			if (track == null || !track.plan().fingerprint().equals(plan)) {
				logger.log(System.Logger.Level.DEBUG, () -> "Ignored " + action.label() + " of split " + split
						+ " from " + origin + ": not the rollout here");
				return;
			}
			if (action == RolloutAction.ROLL_BACK && !byOperator && track.status().state() == Rollout.State.PROMOTED) {
				logger.log(System.Logger.Level.INFO, "Kept the promotion of " + track.plan().target() + " in split "
						+ track.split() + ": a judgement's roll-back from " + origin + " does not undo it");
				return;
			}
			// A peer's reason is any short text: escaped, so that it cannot forge a log
			// line or hide in one.
			apply(track, action, "by " + origin + ((reason != null) ? ": " + escaped(reason) : ""), false);
		});
	}

	/**
	 * Returns where each rollout stands here, for a peer that starts; a rollout still
	 * waiting for the peers' state is left out (it knows nothing to tell).
	 * @return the states
	 */
	public List<PeerState> peerStates() {
		List<PeerState> states = new ArrayList<>();
		for (RolloutTrack track : this.tracks.values()) {
			if (!track.awaitsPeers()) {
				Rollout.Status status = track.status();
				states.add(new PeerState(track.split(), track.plan().fingerprint(), status.state(), status.step(),
						status.reason()));
			}
		}
		return states;
	}

	/**
	 * Takes the state of the rollouts a peer answered with, on the control thread: each
	 * rollout still waiting for it takes its peer's state (the same step, paused,
	 * promoted or rolled back; a progressing step judged a fresh interval from now), or
	 * starts on its first step when the peer has no such rollout. The first answer ends
	 * the wait; later ones change nothing here (the decisions they carry arrive as
	 * decisions).
	 * @param states the peer's rollouts
	 * @param origin the peer
	 */
	public void peersAnswered(List<PeerState> states, String origin) {
		List<PeerState> copy = List.copyOf(states);
		this.control.execute(() -> {
			for (RolloutTrack track : this.tracks.values()) {
				if (track.awaitsPeers()) {
					adopt(track, copy, origin);
				}
			}
		});
	}

	private @Nullable RolloutTrack find(String split) {
		RolloutTrack track = this.tracks.get(split);
		if (track != null) {
			return track;
		}
		for (RolloutTrack candidate : this.tracks.values()) {
			if (candidate.split().equalsIgnoreCase(split)) {
				return candidate;
			}
		}
		return null;
	}

	// Everything below runs on the control thread.

	private void apply(Map<String, RolloutPlan> plans) {
		// A replica that starts (a restart, a scale-up) runs each rollout where its
		// peers have it, not from the first step: a promoted canary's traffic must not
		// go back to the old version, which may already be scaled down. Until a peer
		// answers, the rollout stays paused on its first step.
		boolean askPeers = !this.planned && this.fleet.get().asksPeersOnStart();
		this.planned = true;
		plans.forEach((split, plan) -> {
			RolloutTrack track = this.tracks.get(split);
			if (track != null && track.plan().equals(plan)) {
				// The block is unchanged: the rollout keeps its state, whatever else
				// changed, and takes the new settings' plan, so that requests recognise
				// it by identity.
				track.keep(plan);
				return;
			}
			this.transitions.computeIfAbsent(split, (key) -> {
				Map<Rollout.State, AtomicLong> counts = new EnumMap<>(Rollout.State.class);
				for (Rollout.State state : Rollout.State.values()) {
					counts.put(state, new AtomicLong());
				}
				return counts;
			});
			long now = this.control.nanoTime();
			if (askPeers) {
				RolloutTrack waiting = new RolloutTrack(split, plan, Rollout.pause(Rollout.start(plan, now)));
				waiting.awaitPeers(now + plan.intervalNanos());
				this.tracks.put(split, waiting);
				count(waiting, Rollout.State.PAUSED);
				verdict(waiting, VerdictKind.STARTED, AWAITING_PEERS, null);
				logger.log(System.Logger.Level.INFO,
						"Rollout of " + plan.target() + " in split " + split + " waits for its state in the fleet ("
								+ (plan.shadow() ? "in its shadow stage" : "paused at " + plan.steps()[0] + "%")
								+ ", one interval at most)");
				return;
			}
			RolloutTrack started = new RolloutTrack(split, plan, Rollout.start(plan, now));
			this.tracks.put(split, started);
			count(started, started.status().state());
			verdict(started, VerdictKind.STARTED, (track != null) ? "the rollout block changed" : null, null);
			logger.log(System.Logger.Level.INFO,
					"Rollout of " + plan.target() + " in split " + split + " started " + (plan.shadow()
							? "in its shadow stage (a copy of the traffic only)" : "at " + plan.steps()[0] + "%")
							+ ((track != null) ? " (its block changed)" : ""));
		});
		this.tracks.keySet().retainAll(plans.keySet());
		this.transitions.keySet().retainAll(plans.keySet());
	}

	private void tick() {
		long now = this.control.nanoTime();
		this.separately.forEach(this.tracks.values(), RolloutTrack::split, (track) -> judge(track, now));
	}

	private void judge(RolloutTrack track, long now) {
		if (track.awaitsPeers() && now - track.awaitPeersUntil() >= 0) {
			// Nobody answered in an interval: alone, or the whole fleet restarted.
			startAlone(track, "no peer told its state within one interval: from the first step");
			return;
		}
		if (track.status().state() == Rollout.State.SHADOWING) {
			// Not while waiting for the peers' state: where the fleet has it comes first.
			if (!track.awaitsPeers()) {
				judgeShadow(track, now);
			}
			return;
		}
		if (!track.isJudging()) {
			// Paused or ended: nothing records, and entering that state emptied the
			// windows.
			return;
		}
		RolloutTrack.Windows windows = track.drain();
		Judgement judgement = Rollout.judge(track.plan(), track.status(), windows.canary(), windows.others(), now);
		Rollout.Status next = judgement.status();
		switch (judgement.kind()) {
			case NOT_DUE -> {
			}
			case HOLD -> {
				verdict(track, VerdictKind.HOLD, Rollout.holdReason(track.plan(), windows.canary()), windows);
				track.hold(next);
			}
			case NEXT -> {
				verdict(track, VerdictKind.NEXT, null, windows);
				enter(track, next);
				logger.log(System.Logger.Level.INFO, "Rollout of " + track.plan().target() + " in split "
						+ track.split() + " moved on to " + next.percent() + "%");
			}
			case PROMOTED -> {
				verdict(track, VerdictKind.PROMOTED, null, windows);
				enter(track, next);
				logger.log(System.Logger.Level.INFO, "Rollout of " + track.plan().target() + " in split "
						+ track.split() + " is promoted at " + next.percent() + "%");
				this.fleet.get()
					.rollout(track.split(), track.plan().fingerprint(), RolloutAction.PROMOTE, "promoted", false);
			}
			case ROLLED_BACK -> {
				verdict(track, VerdictKind.ROLLED_BACK, next.reason(), windows);
				enter(track, next);
				logger.log(System.Logger.Level.WARNING,
						"Rolled back " + track.plan().target() + " in split " + track.split() + ": " + next.reason());
				this.fleet.get()
					.rollout(track.split(), track.plan().fingerprint(), RolloutAction.ROLL_BACK, next.reason(), false);
			}
		}
	}

	private void judgeShadow(RolloutTrack track, long now) {
		Rollout.Window compared = track.shadowCompared();
		Judgement judgement = Rollout.judgeShadow(track.plan(), track.status(), compared, now);
		Rollout.Status next = judgement.status();
		String stage = String.format(java.util.Locale.ROOT,
				"shadow stage: %d of %d compared answers differed, from %d clients", compared.errors(),
				compared.requests(), compared.clients());
		switch (judgement.kind()) {
			case NEXT -> {
				verdict(track, VerdictKind.NEXT, stage, null);
				enter(track, next);
				logger.log(System.Logger.Level.INFO, "Rollout of " + track.plan().target() + " in split "
						+ track.split() + " left its shadow stage (" + stage + ") for " + next.percent() + "%");
			}
			case ROLLED_BACK -> {
				verdict(track, VerdictKind.ROLLED_BACK, next.reason(), null);
				enter(track, next);
				logger.log(System.Logger.Level.WARNING,
						"Rolled back " + track.plan().target() + " in split " + track.split() + ": " + next.reason());
				this.fleet.get()
					.rollout(track.split(), track.plan().fingerprint(), RolloutAction.ROLL_BACK, next.reason(), false);
			}
			default -> {
			}
		}
	}

	private void adopt(RolloutTrack track, List<PeerState> states, String origin) {
		RolloutPlan plan = track.plan();
		PeerState peer = null;
		for (PeerState state : states) {
			if (state.split().equalsIgnoreCase(track.split()) && state.plan().equals(plan.fingerprint())) {
				peer = state;
			}
		}
		if (peer == null) {
			startAlone(track, origin + " has no such rollout, or is starting too: from the first step");
			return;
		}
		String by = "as " + origin + " has it";
		Rollout.Status next = peer.adopted(plan, this.control.nanoTime(), by);
		track.stopAwaitingPeers();
		verdict(track, VerdictKind.adopting(next.state()), by, null);
		enter(track, next);
		logger.log(System.Logger.Level.INFO, "Rollout of " + plan.target() + " in split " + track.split() + " is "
				+ next.state().label() + " at " + next.percent() + "% " + by);
	}

	private void startAlone(RolloutTrack track, String why) {
		track.stopAwaitingPeers();
		verdict(track, VerdictKind.RESUMED, why, null);
		enter(track, Rollout.start(track.plan(), this.control.nanoTime()));
		logger.log(System.Logger.Level.INFO, "Rollout of " + track.plan().target() + " in split " + track.split()
				+ " started at " + track.status().percent() + "%: " + why);
	}

	/**
	 * Applies an action, an operator's or another replica's, and tells the fleet of an
	 * operator's.
	 */
	private void apply(RolloutTrack track, RolloutAction action, String by, boolean tell) {
		// An operator's action, or a peer's decision, ends the wait for the peers' state.
		track.stopAwaitingPeers();
		Rollout.Status status = track.status();
		Rollout.Status next = Rollout.act(track.plan(), status, action, "rolled back " + by, this.control.nanoTime());
		if (next.equals(status)) {
			return;
		}
		VerdictKind verdict = VerdictKind.of(action);
		verdict(track, verdict, by, null);
		enter(track, next);
		logger.log(System.Logger.Level.INFO, "Rollout of " + track.plan().target() + " in split " + track.split()
				+ " is " + verdict.label() + " " + by + ", at " + next.percent() + "%");
		if (tell) {
			this.fleet.get().rollout(track.split(), track.plan().fingerprint(), action, "by an operator", true);
		}
	}

	private void enter(RolloutTrack track, Rollout.Status next) {
		track.enter(next);
		count(track, next.state());
		if (next.state() == Rollout.State.PROMOTED && track.firstPromotion()) {
			// Once per rollout: the promotion lives in memory, and a fleet restarted all
			// at once (nobody left to ask) runs the rollout again from its first step.
			logger.log(System.Logger.Level.WARNING,
					"Rollout of " + track.plan().target() + " in split " + track.split()
							+ " is promoted: put its final weights in the configuration (the target at "
							+ next.percent() + "% of the split) and remove the rollout block, or a fleet that restarts"
							+ " all at once runs it again from its first step");
		}
	}

	private void count(RolloutTrack track, Rollout.State state) {
		Map<Rollout.State, AtomicLong> counts = this.transitions.get(track.split());
		if (counts != null) {
			counts.get(state).incrementAndGet();
		}
	}

	/**
	 * Records a verdict with the status it was taken on.
	 */
	private void verdict(RolloutTrack track, VerdictKind kind, @Nullable String reason,
			RolloutTrack.@Nullable Windows windows) {
		Rollout.Status status = track.status();
		track.verdict(new Verdict(this.epochMillis.getAsLong(), status.step(), status.percent(), kind, reason,
				(windows != null) ? windows.canary() : null, (windows != null) ? windows.others() : null));
		this.events.rolloutVerdict(track.split(), track.plan().id(), kind.label(), status.step(), reason);
	}

	/**
	 * Returns a peer's text with what could break or forge a log line (C0 and C1 control
	 * characters, DEL, the Unicode line and paragraph separators) escaped as
	 * {@code \\uXXXX}, cut at 200 characters; the fleet's inbox bounds it already.
	 */
	static String escaped(String text) {
		StringBuilder escaped = new StringBuilder(Math.min(text.length(), 200));
		for (int i = 0; i < text.length() && i < 200; i++) {
			char c = text.charAt(i);
			if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
				escaped.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
			}
			else {
				escaped.append(c);
			}
		}
		return (text.length() > 200) ? escaped.append("...").toString() : escaped.toString();
	}

}
