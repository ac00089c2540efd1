/**
 * One {@code lb://} exchange, from resolve to answer: its owner
 * ({@link dev.gatewaylb.internal.exchange.ProxiedExchange}), which only sequences, and
 * the parts it hands what they need: the picks, the attempt (one settle protocol), the
 * lease, the hedged race, the split's decision, the sender of shadow copies, the
 * gateway's own answers, the request body's and the answer's idle limits.
 * docs/request-path.md draws it.
 */
@NullMarked
package dev.gatewaylb.internal.exchange;

import org.jspecify.annotations.NullMarked;
