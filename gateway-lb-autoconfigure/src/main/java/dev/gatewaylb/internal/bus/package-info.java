/**
 * A fleet's shared decisions over Spring Cloud Bus: rollout verdicts and drains one
 * replica takes, followed by every other; the fleet's clock and the signed inbox.
 */
@NullMarked
package dev.gatewaylb.internal.bus;

import org.jspecify.annotations.NullMarked;
