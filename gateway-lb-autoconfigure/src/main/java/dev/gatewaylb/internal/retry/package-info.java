/**
 * The retry budget: retries, and hedged backups, as a share of a service's recent
 * requests. Pure Java.
 */
@NullMarked
package dev.gatewaylb.internal.retry;

import org.jspecify.annotations.NullMarked;
