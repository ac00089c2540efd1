package dev.gatewaylb.internal.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.gateway.discovery.SourceStatus;
import dev.gatewaylb.internal.control.ControlThread;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code gatewayLb} health indicator: DOWN when one of gateway-lb's background loops
 * (the control thread's named jobs: discovery poll, probes, latency ejection, hedge
 * windows, rollout ticks) has not ended a run for {@value #STUCK_AFTER_INTERVALS} of its
 * intervals, which means that the control thread is stuck (a discovery client that
 * blocks, a listener that never returns) and membership, health and rollouts have stopped
 * following the world; DOWN too while an instance source with a view of its own (a
 * Kubernetes watch) names a problem. UP otherwise. Its details give each loop's interval,
 * the age of its last run and how many of its runs threw.
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

	private final @Nullable InstanceSource source;

	/**
	 * Creates the indicator.
	 * @param control the control thread whose loops it watches
	 */
	public GatewayLbHealthIndicator(ControlThread control) {
		this(control, null);
	}

	/**
	 * Creates the indicator.
	 * @param control the control thread whose loops it watches
	 * @param source where instances come from: a source with a view of its own (a watch)
	 * shows it under {@code discovery}, and one that names a problem makes the indicator
	 * DOWN
	 */
	public GatewayLbHealthIndicator(ControlThread control, @Nullable InstanceSource source) {
		this.control = Objects.requireNonNull(control, "control");
		this.source = source;
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
		SourceStatus status = (this.source != null) ? this.source.status() : null;
		boolean down = !stuck.isEmpty() || (status != null && status.problem() != null);
		Health.Builder health = down ? Health.down() : Health.up();
		if (!stuck.isEmpty()) {
			health.withDetail("stuck", stuck);
		}
		if (status != null) {
			Map<String, Object> discovery = new LinkedHashMap<>();
			discovery.put("source", status.source());
			discovery.put("inSync", status.inSync());
			discovery.put("lastSync", (status.lastSync() != null) ? status.lastSync().toString() : null);
			if (status.problem() != null) {
				discovery.put("problem", status.problem());
			}
			health.withDetail("discovery", discovery);
		}
		return health.withDetail("loops", loops).build();
	}

}
