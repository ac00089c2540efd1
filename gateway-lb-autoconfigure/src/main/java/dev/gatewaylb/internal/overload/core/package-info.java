/**
 * Overload protection, as pure Java: adaptive concurrency limits per endpoint, computed
 * by Netflix's concurrency-limits algorithms from the samples the request path adds, and
 * the partitions that share a service's limit.
 */
@NullMarked
package dev.gatewaylb.internal.overload.core;

import org.jspecify.annotations.NullMarked;
