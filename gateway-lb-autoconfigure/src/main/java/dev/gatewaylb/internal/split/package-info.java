/**
 * Traffic splits between services and the affinity cookie that keeps a session on one
 * side. Pure Java.
 */
@NullMarked
package dev.gatewaylb.internal.split;

import org.jspecify.annotations.NullMarked;
