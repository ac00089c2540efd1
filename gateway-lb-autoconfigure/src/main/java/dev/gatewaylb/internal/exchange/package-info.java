/**
 * The request path: the one filter that owns an attempt from split and pick to outcome
 * and retry, the filter that ends each exchange's lease exactly once, and the routing
 * filter that sends through each service's own client. {@link FilterOrder} places them.
 */
@NullMarked
package dev.gatewaylb.internal.exchange;

import org.jspecify.annotations.NullMarked;
