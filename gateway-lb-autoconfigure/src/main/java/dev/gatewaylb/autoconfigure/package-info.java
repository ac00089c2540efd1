/**
 * Auto-configuration of gateway-lb: wiring only, the API classes an application may
 * exclude or order against. The features the runtime holds are listed in
 * {@code dev.gatewaylb.internal.autoconfigure.Features}.
 */
@NullMarked
package dev.gatewaylb.autoconfigure;

import org.jspecify.annotations.NullMarked;
