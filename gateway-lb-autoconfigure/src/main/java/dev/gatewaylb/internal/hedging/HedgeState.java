package dev.gatewaylb.internal.hedging;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.actuate.GatewayLbReport.HedgeReport;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.Metered;
import dev.gatewaylb.internal.hedging.core.HedgeDelay;
import dev.gatewaylb.internal.hedging.core.Hedging;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * A service's hedged requests: when an attempt gets a backup and the budget of backups
 * ({@link Hedging}, {@code null} while the service does not hedge), and what became of
 * the backups. The hedging carries over while its settings do (its latency window and
 * budget with it); the counts always do. Thread-safe: the hedging is, and the counts are
 * {@link LongAdder}s.
 */
public final class HedgeState implements Metered {

	/**
	 * The feature: a service's state, and the {@code hedge-window-roll} job that moves
	 * every hedging service's latency window on every {@link #WINDOW_STEP}, off the event
	 * loops, so that the window of {@value HedgeDelay#WINDOW_INTERVALS} steps covers the
	 * last ten seconds.
	 */
	public static final Feature<HedgeSettings, HedgeState> FEATURE = new Feature<>() {

		@Override
		public Class<HedgeState> stateType() {
			return HedgeState.class;
		}

		@Override
		public HedgeState next(@Nullable HedgeState previous, HedgeSettings settings, Context service) {
			if (previous != null && previous.settings.equals(settings)) {
				return previous;
			}
			Hedging hedging = settings.enabled()
					? new Hedging(settings.maxExtraLoad(), settings.minDelayNanos(), service.nanoClock()) : null;
			return new HedgeState(settings, hedging, (previous != null) ? previous.counts : new Counts());
		}

		@Override
		public List<Job<HedgeState>> jobs() {
			return List.of(new Job<>("hedge-window-roll", WINDOW_STEP, (state, service) -> {
				Hedging hedging = state.hedging;
				if (hedging != null) {
					hedging.roll();
				}
			}));
		}

	};

	/**
	 * One step of a hedge delay's window.
	 */
	public static final Duration WINDOW_STEP = Duration.ofSeconds(1);

	static final String HEDGES = "gateway.lb.hedges";

	private final HedgeSettings settings;

	private final @Nullable Hedging hedging;

	private final Counts counts;

	private HedgeState(HedgeSettings settings, @Nullable Hedging hedging, Counts counts) {
		this.settings = settings;
		this.hedging = hedging;
		this.counts = counts;
	}

	/**
	 * Returns the settings the state was built from.
	 * @return the settings
	 */
	public HedgeSettings settings() {
		return this.settings;
	}

	/**
	 * Returns when an attempt gets a backup, and the budget of backups.
	 * @return the hedging, or {@code null} when the service does not hedge
	 */
	public @Nullable Hedging hedging() {
		return this.hedging;
	}

	/**
	 * Returns the count of backup requests sent.
	 * @return the counter
	 */
	public LongAdder sent() {
		return this.counts.sent;
	}

	/**
	 * Returns the count of backups whose response headers came first.
	 * @return the counter
	 */
	public LongAdder won() {
		return this.counts.won;
	}

	/**
	 * Returns the count of backups cancelled because the first attempt answered first, or
	 * that failed.
	 * @return the counter
	 */
	public LongAdder lost() {
		return this.counts.lost;
	}

	/**
	 * Returns the count of backups the hedge budget refused.
	 * @return the counter
	 */
	public LongAdder refusedByBudget() {
		return this.counts.refusedByBudget;
	}

	/**
	 * Returns the actuator's section of the service's hedging.
	 * @return the section, or {@code null} when the service does not hedge
	 */
	public @Nullable HedgeReport report() {
		Hedging hedging = this.hedging;
		if (hedging == null) {
			return null;
		}
		long delay = hedging.delayNanos();
		return new HedgeReport(hedging.delay().maxExtraLoad(), this.settings.minDelayNanos() / 1_000_000.0,
				(delay == HedgeDelay.UNKNOWN) ? null : delay / 1_000_000.0, hedging.delay().samplesInWindow(),
				this.counts.sent.sum(), this.counts.won.sum(), this.counts.lost.sum(),
				this.counts.refusedByBudget.sum());
	}

	@Override
	public List<Meter> register(MeterRegistry registry, String serviceId) {
		if (this.hedging == null) {
			return List.of();
		}
		return List.of(
				counter(registry, serviceId, "sent", this.counts.sent,
						"Backup requests sent to another endpoint because an answer was slow"),
				counter(registry, serviceId, "won", this.counts.won,
						"Backup requests whose response headers came first"),
				counter(registry, serviceId, "lost", this.counts.lost,
						"Backup requests cancelled because the first attempt answered first, or that failed"),
				counter(registry, serviceId, "budget", this.counts.refusedByBudget,
						"Backup requests the hedge budget (max-extra-load) refused"));
	}

	private static Meter counter(MeterRegistry registry, String serviceId, String outcome, LongAdder count,
			String description) {
		return FunctionCounter.builder(HEDGES, count, LongAdder::sum)
			.tags("service", serviceId, "outcome", outcome)
			.description(description)
			.register(registry);
	}

	/**
	 * The counts, carried from each state of a service to the next.
	 */
	private static final class Counts {

		final LongAdder sent = new LongAdder();

		final LongAdder won = new LongAdder();

		final LongAdder lost = new LongAdder();

		final LongAdder refusedByBudget = new LongAdder();

	}

}
