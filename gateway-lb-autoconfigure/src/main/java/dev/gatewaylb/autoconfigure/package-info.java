/**
 * Auto-configuration of gateway-lb: wiring only.
 */
@NullMarked
package dev.gatewaylb.autoconfigure;

import org.jspecify.annotations.NullMarked;
