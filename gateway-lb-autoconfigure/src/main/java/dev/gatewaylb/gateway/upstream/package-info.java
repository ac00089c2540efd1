/**
 * The upstream observer SPI ({@link dev.gatewaylb.gateway.upstream.UpstreamObserver}):
 * how one attempt sees its request and response go by. The pools and clients are in
 * {@code dev.gatewaylb.internal.upstream}.
 */
@NullMarked
package dev.gatewaylb.gateway.upstream;

import org.jspecify.annotations.NullMarked;
