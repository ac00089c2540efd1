/**
 * Overload protection: adaptive concurrency limits per endpoint, computed by Netflix's
 * concurrency-limits algorithms from samples the request path adds to each endpoint, and
 * the partitions that share a service's limit. Plain Java and that library.
 */
@NullMarked
package dev.gatewaylb.internal.overload.core;

import org.jspecify.annotations.NullMarked;
