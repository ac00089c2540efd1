/**
 * Hedged requests ({@code hedge}): a backup on another endpoint when an answer is slower
 * than the service's hedge delay, within a budget of extra load. The pure delay and
 * budget are in {@code core}; this package maps the settings, keeps each service's
 * hedging and counts, rolls its latency window, and reports and meters it. The exchange
 * sends a hedged round through its own race.
 */
@NullMarked
package dev.gatewaylb.internal.hedging;

import org.jspecify.annotations.NullMarked;
