/**
 * A runnable Spring Cloud Gateway that balances with gateway-lb over three embedded demo
 * backends.
 */
@NullMarked
package dev.gatewaylb.sample;

import org.jspecify.annotations.NullMarked;
