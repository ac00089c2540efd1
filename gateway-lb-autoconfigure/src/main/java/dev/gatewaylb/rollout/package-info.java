/**
 * The fleet decisions SPI of rollouts and drains
 * ({@link dev.gatewaylb.rollout.FleetDecisions},
 * {@link dev.gatewaylb.rollout.RolloutAction}), API. The rollouts themselves are in
 * {@code dev.gatewaylb.internal.rollout}.
 */
@NullMarked
package dev.gatewaylb.rollout;

import org.jspecify.annotations.NullMarked;
