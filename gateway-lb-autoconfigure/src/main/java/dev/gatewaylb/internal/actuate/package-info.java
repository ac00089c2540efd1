/**
 * The {@code gatewaylb} actuator endpoint (the report root: one line per feature's
 * section), its dashboard and write guard, and gateway-lb's Micrometer meters (a
 * feature's own meters come from its state).
 */
@NullMarked
package dev.gatewaylb.internal.actuate;

import org.jspecify.annotations.NullMarked;
