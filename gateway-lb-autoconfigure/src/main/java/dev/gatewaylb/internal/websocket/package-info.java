/**
 * WebSockets ({@code drain}): each service's open sessions by endpoint, and the
 * {@code websocket-drain} job that closes the sessions of an endpoint drained (or gone)
 * for longer than {@code drain.websocket-grace} with 1001. The exchange carries the
 * sessions and registers each one here for its life.
 */
@NullMarked
package dev.gatewaylb.internal.websocket;

import org.jspecify.annotations.NullMarked;
