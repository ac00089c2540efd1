package dev.gatewaylb.config;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A progressive rollout of one target of a split; a key that is not set is {@code null}
 * and takes its built-in default (the settings layer's one table of them) when the split
 * is mapped.
 *
 * @param target The split target whose share ramps. Required.
 * @param steps The target's percent of the split's traffic at each step, increasing, each
 * 1 to 100.
 * @param interval Time on each step before it is judged, at least 1 s.
 * @param minRequests Fewest canary requests an interval must have to be judged; with
 * fewer the step stays and is judged again an interval later.
 * @param maxErrorRateIncrease Most the canary's error rate may exceed the other targets'
 * over an interval, 0 to 1.
 * @param maxLatencyRatio Most the canary's p99 may be, as a multiple of the other
 * targets' p99 over an interval, at least 1.
 * @param id The rollout's epoch: replicas follow each other's decisions only about the
 * same id, so give the block a new one to run it again after a roll-back. 1 to 64 *
 * letters, digits, '.', '_' or '-'; unset, one is derived from the other keys.
 * @param errorStatuses Answers that count as errors of the side that gives them, 400 to
 * 599 (a 401 or 429 may be listed); empty counts every 5xx. Independent of passive
 * health's on-statuses. The gateway's own answers for the chosen side (no endpoint, a
 * full pool) always count.
 * @param maxOutcomesPerClient Most answers one client counts for on each side of the
 * comparison per interval; 0 for no limit. A client is its sticky value when a sticky
 * split's request presents one, else its address through the trusted proxies.
 * @param minClients Fewest distinct clients the canary's counted answers must come from
 * for a step to be judged (and the other targets' for a baseline), 0 to 1000.
 * @param shadow Whether the rollout starts with a shadow stage: the target gets none of
 * the split's traffic but a copy of it, and moves to its first step only after
 * min-requests copied answers whose status class differs from the primary's at a rate
 * under max-mismatch-rate; it is rolled back otherwise.
 * @param maxMismatchRate Most the shadow stage's copied answers may differ from the
 * primary's, 0 to 1.
 */
public record RolloutProperties(@Nullable String target, @Nullable List<Integer> steps, @Nullable Duration interval,
		@Nullable Long minRequests, @Nullable Double maxErrorRateIncrease, @Nullable Double maxLatencyRatio,
		@Nullable String id, @Nullable List<Integer> errorStatuses, @Nullable Integer maxOutcomesPerClient,
		@Nullable Integer minClients, @Nullable Boolean shadow, @Nullable Double maxMismatchRate) {

	public RolloutProperties {
		steps = (steps != null) ? List.copyOf(steps) : null;
		errorStatuses = (errorStatuses != null) ? List.copyOf(errorStatuses) : null;
	}

}
