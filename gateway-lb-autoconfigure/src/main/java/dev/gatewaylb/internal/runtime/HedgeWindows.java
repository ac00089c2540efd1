package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.internal.hedging.core.HedgeDelay;
import dev.gatewaylb.internal.hedging.core.Hedging;
import org.jspecify.annotations.Nullable;

/**
 * Moves every hedging service's latency window on, the {@code hedge-window-roll} job:
 * every {@link #INTERVAL} on the control thread, off the event loops, so that the window
 * of {@value HedgeDelay#WINDOW_INTERVALS} intervals covers the last ten seconds.
 */
final class HedgeWindows {

	/**
	 * One interval of a {@link HedgeDelay}'s window.
	 */
	static final Duration INTERVAL = Duration.ofSeconds(1);

	private final Supplier<List<ServiceRuntime>> runtimes;

	private final ControlThread control;

	private final Separately separately = new Separately("hedge-window-roll");

	private ControlThread.@Nullable Job job;

	HedgeWindows(Supplier<List<ServiceRuntime>> runtimes, ControlThread control) {
		this.runtimes = runtimes;
		this.control = control;
	}

	synchronized void start() {
		if (this.job == null) {
			this.job = this.control.every("hedge-window-roll", INTERVAL, this::roll);
		}
	}

	private void roll() {
		this.separately.forEach(this.runtimes.get(), ServiceRuntime::id, (runtime) -> {
			Hedging hedging = runtime.hedging();
			if (hedging != null && runtime.isBalancedHere()) {
				hedging.roll();
			}
		});
	}

}
