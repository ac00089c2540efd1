/**
 * Overload protection ({@code concurrency}): adaptive concurrency limits per endpoint,
 * partitions of the service's limit, and a bounded wait for a place. The pure limiters
 * and partitions are in {@code core}; this package maps the settings, keeps each
 * service's limiters and partitions, runs the limit job, admits or sheds an exchange's
 * pick, and reports it.
 */
@NullMarked
package dev.gatewaylb.internal.overload;

import org.jspecify.annotations.NullMarked;
