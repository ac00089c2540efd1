/**
 * Hedged (backup) requests, as pure Java: when a service's attempt has waited long enough
 * to deserve a backup. Imports the JDK, HdrHistogram and {@code health} only.
 */
@NullMarked
package dev.gatewaylb.internal.hedging.core;

import org.jspecify.annotations.NullMarked;
