package dev.gatewaylb.gateway.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.SplitSettings;
import dev.gatewaylb.split.Rollout;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.SmartLifecycle;

/**
 * Runs every split's rollout: starts it when settings bring or change its block, judges
 * each step when its interval has passed ({@link Rollout#judge}), and applies what an
 * operator asks.
 * <p>
 * Everything that changes a rollout runs on one thread of its own, so its decisions need
 * no lock and a judgement never runs on an event loop. The request path reads a
 * {@link Track}: one map read, then three volatile reads (its plan, compared by reference
 * with the settings', the layout index of the step, and whether the step is being judged
 * and so records outcomes). A step changes the layout by an index into layouts the
 * settings derived when they were bound: nothing is built when a step is taken.
 */
public final class SplitRollouts implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(SplitRollouts.class);

	/**
	 * How often the thread looks for a step whose interval has passed: a step is judged
	 * at most this late.
	 */
	static final Duration TICK = Duration.ofMillis(250);

	/**
	 * How many verdicts the actuator keeps per rollout.
	 */
	static final int VERDICTS_KEPT = 20;

	/**
	 * What an operator may ask of a rollout.
	 */
	public enum Action {

		/**
		 * Stay on the step, unjudged.
		 */
		PAUSE,

		/**
		 * Judge the step again, after a fresh interval.
		 */
		RESUME,

		/**
		 * Give the target its last step's share now.
		 */
		PROMOTE,

		/**
		 * Give the target no share now.
		 */
		ROLL_BACK;

		/**
		 * Returns the action a request names: {@code pause}, {@code resume},
		 * {@code promote}, {@code roll-back}.
		 * @param name the name, in any case
		 * @return the action, or {@code null} for no such action
		 */
		public static @Nullable Action of(@Nullable String name) {
			if (name == null) {
				return null;
			}
			for (Action action : values()) {
				if (action.label().equalsIgnoreCase(name.trim())) {
					return action;
				}
			}
			return null;
		}

		/**
		 * Returns the action's name in requests.
		 * @return the name
		 */
		public String label() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	private final LiveSettings settings;

	private final LongSupplier nanoClock;

	private final LongSupplier epochMillis;

	private final ScheduledExecutorService thread;

	/**
	 * The rollouts by split name, as configured.
	 */
	private final Map<String, Track> tracks = new ConcurrentHashMap<>();

	/**
	 * Transitions by split name, kept while the split has a rollout, across restarts, so
	 * that the counters a meter reads only grow.
	 */
	private final Map<String, Map<Rollout.State, AtomicLong>> transitions = new ConcurrentHashMap<>();

	private volatile boolean running;

	/**
	 * The fleet's channel, looked up when a decision is taken (rarely, on the rollout
	 * thread): the channel follows other replicas' decisions through this registry, so it
	 * cannot be given to it when it is created.
	 */
	private final Supplier<FleetDecisions> fleet;

	/**
	 * Creates the registry; nothing runs until {@link #start()}.
	 * @param settings the settings in force
	 * @param nanoClock a monotonic clock in nanoseconds
	 * @param epochMillis the wall clock, for the times verdicts are shown with
	 * @param fleet the channel that tells the fleet of this replica's decisions,
	 * {@link FleetDecisions#NONE} for a gateway on its own
	 */
	public SplitRollouts(LiveSettings settings, LongSupplier nanoClock, LongSupplier epochMillis,
			Supplier<FleetDecisions> fleet) {
		this.settings = Objects.requireNonNull(settings, "settings");
		this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
		this.epochMillis = Objects.requireNonNull(epochMillis, "epochMillis");
		this.fleet = Objects.requireNonNull(fleet, "fleet");
		this.thread = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "gateway-lb-rollouts");
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Returns the rollout of a split's settings: the request path. A refresh puts its
	 * settings in force a moment before this thread has started or kept their rollout:
	 * until it has, a rollout of another plan is not theirs, and {@code null} says to
	 * take the first step's layout, unjudged. A rollout of an equal plan has as many
	 * steps, so its layout index is always one of the settings' layouts.
	 * @param split the split's settings
	 * @return the rollout, or {@code null} when the split has none or it has not started
	 */
	public @Nullable Track track(SplitSettings split) {
		Rollout.Plan plan = split.rollout();
		if (plan == null) {
			return null;
		}
		Track track = this.tracks.get(split.split().name());
		return (track != null && track.isOf(plan)) ? track : null;
	}

	/**
	 * Returns the rollout of a split by name, whatever its plan.
	 * @param split the split's name as configured
	 * @return the rollout, or {@code null} when the split has none
	 */
	public @Nullable Track track(String split) {
		return this.tracks.get(split);
	}

	/**
	 * Returns the target's share of a split's traffic now, for the meter.
	 * @param split the split's name as configured
	 * @return the percent, or NaN when the split has no rollout
	 */
	public double percent(String split) {
		Track track = this.tracks.get(split);
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
	 * Applies an operator's action to a split's rollout, on the rollout thread, and waits
	 * for it.
	 * @param split the split's name, in any case
	 * @param action the action
	 * @return the rollout after the action, or {@code null} when the split has none
	 */
	public @Nullable Track act(String split, Action action) {
		try {
			return this.thread.submit(() -> {
				Track track = find(split);
				if (track != null) {
					apply(track, action, "by an operator", true);
				}
				return track;
			}).get(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while applying " + action.label() + " to " + split, ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("could not apply " + action.label() + " to the rollout of " + split, ex);
		}
	}

	/**
	 * Follows a decision another replica took, on the rollout thread: the same action,
	 * with the other replica named in the reason, told to nobody. A decision about
	 * another plan (the replicas' rollout blocks differ) or a split without a rollout is
	 * ignored.
	 * @param split the split's name
	 * @param plan the fingerprint of the plan decided on
	 * @param action the action
	 * @param reason why, as the other replica said
	 * @param origin the other replica
	 */
	public void follow(String split, String plan, Action action, @Nullable String reason, String origin) {
		run(() -> {
			Track track = find(split);
			if (track == null || !track.plan.fingerprint().equals(plan)) {
				logger.debug("Ignored " + action.label() + " of split " + split + " from " + origin
						+ ": not the rollout here");
				return;
			}
			String followed = "by " + origin + ((reason != null) ? ": " + reason : "");
			apply(track, action, followed, false);
		});
	}

	/**
	 * Runs every task the rollout thread was given so far: for tests.
	 */
	void sync() {
		try {
			this.thread.submit(() -> {
			}).get(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void start() {
		this.running = true;
		this.settings.onApply((applied) -> run(() -> apply(applied)));
		long tick = TICK.toMillis();
		this.thread.scheduleWithFixedDelay(safely(this::tick), tick, tick, TimeUnit.MILLISECONDS);
	}

	/**
	 * Starts with the service runtimes, before the web server takes requests.
	 */
	@Override
	public int getPhase() {
		return WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE - 1;
	}

	@Override
	public void stop() {
		this.running = false;
		this.thread.shutdownNow();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	private void run(Runnable task) {
		try {
			this.thread.execute(safely(task));
		}
		catch (RuntimeException ex) {
			logger.debug("gateway-lb rollout thread is stopped; task dropped", ex);
		}
	}

	/**
	 * Returns the task, made to log its failure instead of ending the thread's schedule.
	 */
	private static Runnable safely(Runnable task) {
		return () -> {
			try {
				task.run();
			}
			catch (RuntimeException ex) {
				logger.error("gateway-lb rollout task failed", ex);
			}
		};
	}

	private @Nullable Track find(String split) {
		Track track = this.tracks.get(split);
		if (track != null) {
			return track;
		}
		for (Track candidate : this.tracks.values()) {
			if (candidate.split.equalsIgnoreCase(split)) {
				return candidate;
			}
		}
		return null;
	}

	// Everything below runs on the rollout thread.

	private void apply(GatewayLbSettings applied) {
		Set<String> configured = new HashSet<>();
		for (SplitSettings split : applied.splits().values()) {
			Rollout.Plan plan = split.rollout();
			if (plan == null) {
				continue;
			}
			String name = split.split().name();
			configured.add(name);
			Track track = this.tracks.get(name);
			if (track != null && track.plan.equals(plan)) {
				// The block is unchanged: the rollout keeps its state, whatever else
				// changed, and takes the new settings' plan, so that requests recognise
				// it by identity.
				track.plan = plan;
				continue;
			}
			this.transitions.computeIfAbsent(name, (key) -> {
				Map<Rollout.State, AtomicLong> counts = new EnumMap<>(Rollout.State.class);
				for (Rollout.State state : Rollout.State.values()) {
					counts.put(state, new AtomicLong());
				}
				return counts;
			});
			Track started = new Track(name, plan, Rollout.start(plan, this.nanoClock.getAsLong()));
			this.tracks.put(name, started);
			count(started, Rollout.State.PROGRESSING);
			verdict(started, "started", (track != null) ? "the rollout block changed" : null, null, null);
			logger.info("Rollout of " + plan.target() + " in split " + name + " started at " + plan.steps()[0] + "%"
					+ ((track != null) ? " (its block changed)" : ""));
		}
		this.tracks.keySet().retainAll(configured);
		this.transitions.keySet().retainAll(configured);
	}

	private void tick() {
		long now = this.nanoClock.getAsLong();
		for (Track track : this.tracks.values()) {
			if (!track.judging) {
				// Paused or ended: nothing records, and entering that state emptied the
				// windows.
				continue;
			}
			track.canary.drain();
			track.others.drain();
			Rollout.Window canary = track.canary.window();
			Rollout.Window others = track.others.window();
			track.current = new Windows(canary, others);
			Rollout.Status status = track.status;
			Rollout.Status next = Rollout.judge(track.plan, status, canary, others, now);
			if (next == status) {
				// Not due yet: judge returns the very status it was given.
				continue;
			}
			if (next.state() == Rollout.State.PROGRESSING && next.step() == status.step()) {
				// Too few canary requests: the step's counts go on accumulating until
				// they are enough to judge.
				verdict(track, "hold", "fewer than min-requests canary requests", canary, others);
				track.status = next;
				continue;
			}
			verdict(track, (next.state() == Rollout.State.PROGRESSING) ? "next" : next.state().label(), next.reason(),
					canary, others);
			enter(track, next);
			if (next.state() == Rollout.State.ROLLED_BACK) {
				logger.warn("Rolled back " + track.plan.target() + " in split " + track.split + ": " + next.reason());
				this.fleet.get().rollout(track.split, track.plan.fingerprint(), Action.ROLL_BACK, next.reason());
			}
			else {
				logger.info("Rollout of " + track.plan.target() + " in split " + track.split
						+ ((next.state() == Rollout.State.PROMOTED) ? " is promoted at " : " moved on to ")
						+ next.percent() + "%");
				if (next.state() == Rollout.State.PROMOTED) {
					this.fleet.get().rollout(track.split, track.plan.fingerprint(), Action.PROMOTE, "promoted");
				}
			}
		}
	}

	/**
	 * Applies an action, an operator's or another replica's, and tells the fleet of an
	 * operator's.
	 */
	private void apply(Track track, Action action, String by, boolean tell) {
		Rollout.Status status = track.status;
		Rollout.Status next = switch (action) {
			case PAUSE -> Rollout.pause(status);
			case RESUME -> Rollout.resume(track.plan, status, this.nanoClock.getAsLong());
			case PROMOTE -> Rollout.promote(track.plan, status);
			case ROLL_BACK -> Rollout.rollBack(status, "rolled back " + by);
		};
		if (next.equals(status)) {
			return;
		}
		String verdict = switch (action) {
			case PAUSE -> "paused";
			case RESUME -> "resumed";
			case PROMOTE -> "promoted";
			case ROLL_BACK -> "rolled-back";
		};
		verdict(track, verdict, by, null, null);
		enter(track, next);
		logger.info("Rollout of " + track.plan.target() + " in split " + track.split + " is " + verdict + " " + by
				+ ", at " + next.percent() + "%");
		if (tell) {
			this.fleet.get().rollout(track.split, track.plan.fingerprint(), action, "by an operator");
		}
	}

	/**
	 * Puts a new status in force: a new step, a pause, a resumption or an end, with fresh
	 * counts. Requests routed by the previous step's layout and still on their way record
	 * into the fresh counts, as do requests that read the layout index just before it
	 * changed: a few answers at the start of an interval, which a judgement over the
	 * whole interval does not feel. The reset of the two counters is not atomic either; a
	 * racing attempt may be counted on one and not the other, equally rare.
	 */
	private void enter(Track track, Rollout.Status next) {
		track.canary.reset();
		track.others.reset();
		track.current = Windows.EMPTY;
		track.status = next;
		track.layout = (next.state() == Rollout.State.ROLLED_BACK) ? track.plan.steps().length : next.step();
		track.judging = next.state() == Rollout.State.PROGRESSING;
		count(track, next.state());
	}

	private void count(Track track, Rollout.State state) {
		Map<Rollout.State, AtomicLong> counts = this.transitions.get(track.split);
		if (counts != null) {
			counts.get(state).incrementAndGet();
		}
	}

	private void verdict(Track track, String verdict, @Nullable String reason, Rollout.@Nullable Window canary,
			Rollout.@Nullable Window others) {
		Rollout.Status status = track.status;
		List<Verdict> verdicts = new ArrayList<>(track.verdicts);
		verdicts.add(new Verdict(this.epochMillis.getAsLong(), status.step(), status.percent(), verdict, reason, canary,
				others));
		if (verdicts.size() > VERDICTS_KEPT) {
			verdicts.remove(0);
		}
		track.verdicts = List.copyOf(verdicts);
	}

	/**
	 * One split's rollout: its plan, where it stands, and the two sides of its
	 * comparison. Written by the rollout thread only; every field another thread reads is
	 * volatile.
	 */
	public static final class Track {

		private final String split;

		/**
		 * The plan, replaced by an equal one when a refresh keeps the rollout.
		 */
		private volatile Rollout.Plan plan;

		private final RolloutWindow canary = new RolloutWindow();

		private final RolloutWindow others = new RolloutWindow();

		private volatile Rollout.Status status;

		private volatile int layout;

		private volatile boolean judging;

		private volatile Windows current = Windows.EMPTY;

		private volatile List<Verdict> verdicts = List.of();

		Track(String split, Rollout.Plan plan, Rollout.Status status) {
			this.split = split;
			this.plan = plan;
			this.status = status;
			this.layout = status.step();
			this.judging = status.state() == Rollout.State.PROGRESSING;
		}

		/**
		 * Returns whether this is the rollout of the plan a split's settings carry: the
		 * same instance once the rollout thread has applied the settings (one reference
		 * comparison), an equal one in the moment before.
		 * @param plan the settings' plan
		 * @return whether the plan is this rollout's
		 */
		public boolean isOf(Rollout.Plan plan) {
			Rollout.Plan own = this.plan;
			return own == plan || own.equals(plan);
		}

		/**
		 * Returns the index of the layout in force, for {@link SplitSettings#layout}.
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
		 * Returns the plan.
		 * @return the plan
		 */
		public Rollout.Plan plan() {
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
		 * @return at most {@value SplitRollouts#VERDICTS_KEPT} verdicts
		 */
		public List<Verdict> verdicts() {
			return this.verdicts;
		}

	}

	/**
	 * What the target and the other targets did on a step so far.
	 *
	 * @param canary the rollout's target
	 * @param others the split's other targets
	 */
	public record Windows(Rollout.Window canary, Rollout.Window others) {

		static final Windows EMPTY = new Windows(new Rollout.Window(0, 0, 0), new Rollout.Window(0, 0, 0));

	}

	/**
	 * One decision about a rollout, as the actuator shows it.
	 *
	 * @param atMillis when, in milliseconds since the epoch
	 * @param step the index of the step it was on
	 * @param percent the target's share then
	 * @param verdict {@code started}, {@code hold}, {@code next}, {@code promoted},
	 * {@code rolled-back}, {@code paused} or {@code resumed}
	 * @param reason why, or {@code null}
	 * @param canary what the target did over the judged interval, or {@code null} for an
	 * operator's action
	 * @param others what the other targets did, or {@code null}
	 */
	public record Verdict(long atMillis, int step, int percent, String verdict, @Nullable String reason,
			Rollout.@Nullable Window canary, Rollout.@Nullable Window others) {
	}

}
