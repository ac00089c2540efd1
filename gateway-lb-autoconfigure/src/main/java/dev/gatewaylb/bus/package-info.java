/**
 * The fleet's events on Spring Cloud Bus, API (their types are the bus's wire format):
 * rollout verdicts, drains, and the state a starting replica asks its peers for. What
 * sends and takes them is in {@code dev.gatewaylb.internal.bus}.
 */
@NullMarked
package dev.gatewaylb.bus;

import org.jspecify.annotations.NullMarked;
