/**
 * Localities ({@code locality}): endpoints grouped into priority levels by zone, the
 * gateway's own zone first, with Envoy's overprovisioning and panic, and a spill to the
 * next zone when the local one queues ({@code load-aware}). The balancer draws the levels
 * ({@code balance}); this package maps the settings, runs the spill job, and reports the
 * levels.
 */
@NullMarked
package dev.gatewaylb.internal.locality;

import org.jspecify.annotations.NullMarked;
