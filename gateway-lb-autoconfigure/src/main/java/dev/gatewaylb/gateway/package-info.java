/**
 * The API the gateway plugs into Spring Cloud Gateway and Spring Cloud LoadBalancer: the
 * filter beans and their order, the instance source SPI, the upstream observer SPI. The
 * request path behind them is in {@code dev.gatewaylb.internal}.
 */
@NullMarked
package dev.gatewaylb.gateway;

import org.jspecify.annotations.NullMarked;
