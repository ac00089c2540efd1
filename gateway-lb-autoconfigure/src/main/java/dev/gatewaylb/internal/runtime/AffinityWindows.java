package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.internal.discovery.Member;
import org.jspecify.annotations.Nullable;

/**
 * Moves the window of requests that followed an affinity cookie to each endpoint on, the
 * {@code affinity-window} job: every {@link #INTERVAL} on the control thread, so that the
 * actuator shows each endpoint's followed requests of the last minute, and which draining
 * endpoints still receive sessions, without the request path keeping time.
 */
final class AffinityWindows {

	/**
	 * One slot of the window.
	 */
	static final Duration INTERVAL = Duration.ofSeconds(5);

	/**
	 * The slots of a minute.
	 */
	static final int SLOTS = 12;

	private final Supplier<List<ServiceRuntime>> runtimes;

	private final ControlThread control;

	private final Separately separately = new Separately("affinity-window");

	private ControlThread.@Nullable Job job;

	AffinityWindows(Supplier<List<ServiceRuntime>> runtimes, ControlThread control) {
		this.runtimes = runtimes;
		this.control = control;
	}

	synchronized void start() {
		if (this.job == null) {
			this.job = this.control.every("affinity-window", INTERVAL, this::roll);
		}
	}

	private void roll() {
		this.separately.forEach(this.runtimes.get(), ServiceRuntime::id, (runtime) -> {
			if (runtime.affinityCookie() != null) {
				Snapshot<Member> snapshot = runtime.snapshot();
				for (int i = 0; i < snapshot.size(); i++) {
					snapshot.state(i).rollFollowed(SLOTS);
				}
			}
		});
	}

}
