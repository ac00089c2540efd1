/**
 * The one control thread that gateway-lb's background work runs on: discovery polls,
 * runtime builds, balancer rebuilds, latency evaluation, the hedge window, rollout ticks
 * and active health probes, each a named job with its own interval. Pure Java: the
 * implementation is a {@link java.util.concurrent.ScheduledExecutorService}, and tests
 * replace it with one they drive by hand.
 */
@NullMarked
package dev.gatewaylb.internal.control;

import org.jspecify.annotations.NullMarked;
