/**
 * Passive outlier detection: ejections by consecutive failures and by latency, and the
 * statuses that count as failures. Pure Java.
 */
@NullMarked
package dev.gatewaylb.internal.health;

import org.jspecify.annotations.NullMarked;
