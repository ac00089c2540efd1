/**
 * The {@code gatewaylb} actuator endpoint and gateway-lb's Micrometer meters.
 */
@NullMarked
package dev.gatewaylb.internal.actuate;

import org.jspecify.annotations.NullMarked;
