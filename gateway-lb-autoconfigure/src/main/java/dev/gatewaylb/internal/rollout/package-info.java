/**
 * Progressive rollouts of a split target: the decisions as pure functions of a plan, a
 * status, two windows and a time ({@link dev.gatewaylb.internal.rollout.Rollout}), the
 * windows the request path records into, and the runner that applies them on the control
 * thread ({@link dev.gatewaylb.internal.rollout.SplitRollouts}). Knows neither the
 * settings nor Spring: the runner is given the plans in force by split name.
 */
@NullMarked
package dev.gatewaylb.internal.rollout;

import org.jspecify.annotations.NullMarked;
