/**
 * Upstream pools: one connection provider and HTTP client per service (Reactor Netty's
 * provider, or with {@code pool.loop-affinity: preferred} one of its pools per event loop
 * under one cap per endpoint), the probe client of its active health checks, the dial
 * (resolution, connect, happy eyeballs), and the hooks through which one attempt sees its
 * request and response go by.
 */
@NullMarked
package dev.gatewaylb.internal.upstream;

import org.jspecify.annotations.NullMarked;
