/**
 * The filter beans of the request path, API: the one that hands each {@code lb://}
 * exchange to its owner ({@link dev.gatewaylb.gateway.filter.AttemptFilter}), the one
 * that ends each exchange's lease exactly once, the routing filter that sends through
 * each service's own client, and their order
 * ({@link dev.gatewaylb.gateway.filter.FilterOrder}). Thin shells: the exchange itself is
 * {@code dev.gatewaylb.internal.exchange}.
 */
@NullMarked
package dev.gatewaylb.gateway.filter;

import org.jspecify.annotations.NullMarked;
