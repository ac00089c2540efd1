/**
 * The one control thread that gateway-lb's background work runs on (discovery polls,
 * runtime builds, balancer rebuilds, every feature's jobs, rollout ticks, active health
 * probes, each a named job with its own interval), and the request path's clock and
 * timers ({@link dev.gatewaylb.internal.control.RequestClock}) on the same time. Pure
 * Java: tests replace both with ones they move by hand.
 */
@NullMarked
package dev.gatewaylb.internal.control;

import org.jspecify.annotations.NullMarked;
