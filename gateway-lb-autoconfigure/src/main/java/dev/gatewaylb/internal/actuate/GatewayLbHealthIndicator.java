package dev.gatewaylb.internal.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.gatewaylb.internal.control.ControlThread;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code gatewayLb} health indicator: DOWN when one of gateway-lb's background loops
 * (the control thread's named jobs: discovery poll, probes, latency ejection, hedge
 * windows, rollout ticks) has not ended a run for {@value #STUCK_AFTER_INTERVALS} of its
 * intervals, which means that the control thread is stuck (a discovery client that
 * blocks, a listener that never returns) and membership, health and rollouts have stopped
 * following the world; UP otherwise. Its details give each loop's interval, the age of
 * its last run and how many of its runs threw.
 * <p>
 * Reads only volatile fields the control thread writes, from the caller's thread: the
 * health endpoint never waits on the thread it watches.
 */
public final class GatewayLbHealthIndicator implements HealthIndicator {

	/**
	 * How many of its intervals a loop may go without ending a run before it counts as
	 * stuck.
	 */
	public static final int STUCK_AFTER_INTERVALS = 3;

	private final ControlThread control;

	/**
	 * Creates the indicator.
	 * @param control the control thread whose loops it watches
	 */
	public GatewayLbHealthIndicator(ControlThread control) {
		this.control = Objects.requireNonNull(control, "control");
	}

	@Override
	public Health health() {
		long now = this.control.nanoTime();
		Map<String, Object> loops = new LinkedHashMap<>();
		List<String> stuck = new ArrayList<>();
		for (ControlThread.JobStatus job : this.control.jobStatuses()) {
			long ageMillis = job.age(now).toMillis();
			Map<String, Object> loop = new LinkedHashMap<>();
			loop.put("intervalMillis", job.interval().toMillis());
			loop.put("ageMillis", ageMillis);
			loop.put("failures", job.failures());
			loops.put(job.name(), loop);
			if (job.age(now).compareTo(job.interval().multipliedBy(STUCK_AFTER_INTERVALS)) > 0) {
				stuck.add(job.name());
			}
		}
		Health.Builder health = stuck.isEmpty() ? Health.up() : Health.down().withDetail("stuck", stuck);
		return health.withDetail("loops", loops).build();
	}

}
