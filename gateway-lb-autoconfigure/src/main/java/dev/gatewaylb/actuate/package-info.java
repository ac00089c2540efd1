/**
 * The actuator endpoint's report ({@link dev.gatewaylb.actuate.GatewayLbReport}): the
 * records {@code GET /actuator/gatewaylb} answers with, API. The endpoint, the dashboard
 * and the meters are in {@code dev.gatewaylb.internal.actuate}.
 */
@NullMarked
package dev.gatewaylb.actuate;

import org.jspecify.annotations.NullMarked;
