/**
 * Hedged (backup) requests, as pure Java: when a service's attempt has waited long enough
 * to deserve a backup, and the budget of backups. Imports the JDK, HdrHistogram and
 * {@code retry} only.
 */
@NullMarked
package dev.gatewaylb.internal.hedging.core;

import org.jspecify.annotations.NullMarked;
