/**
 * Upstream pools: one Reactor Netty connection provider and HTTP client per service, the
 * probe client of its active health checks, the dial (resolution, connect, happy
 * eyeballs), and the hooks through which one attempt sees its request and response go by.
 */
@NullMarked
package dev.gatewaylb.internal.upstream;

import org.jspecify.annotations.NullMarked;
