/**
 * The instance source SPI ({@link dev.gatewaylb.gateway.discovery.InstanceSource}): where
 * each service's endpoints come from. The poll, the members and the services routes name
 * are in {@code dev.gatewaylb.internal.discovery}.
 */
@NullMarked
package dev.gatewaylb.gateway.discovery;

import org.jspecify.annotations.NullMarked;
