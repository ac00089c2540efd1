/**
 * Micrometer observations of the balancing decision: one {@code gateway.lb.attempt} per
 * attempt, a child of the exchange's, and the control side's events (ejection, drain,
 * rollout verdicts). Made only when the application has an observation registry that
 * records something; otherwise nothing here is reached from the request path.
 */
@NullMarked
package dev.gatewaylb.internal.observation;

import org.jspecify.annotations.NullMarked;
