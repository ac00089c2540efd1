package dev.gatewaylb.internal.rollout;

import org.jspecify.annotations.Nullable;

/**
 * One decision about a rollout, as the actuator shows it.
 *
 * @param atMillis when, in milliseconds since the epoch
 * @param step the index of the step it was on
 * @param percent the target's share then
 * @param kind what was decided
 * @param reason why, or {@code null}
 * @param canary what the target did over the judged interval, or {@code null} for an
 * action or a start
 * @param others what the other targets did, or {@code null}
 */
public record Verdict(long atMillis, int step, int percent, VerdictKind kind, @Nullable String reason,
		Rollout.@Nullable Window canary, Rollout.@Nullable Window others) {
}
