/**
 * Traffic splits between services and the sticky cookie that keeps a session on one side.
 * Pure Java.
 */
@NullMarked
package dev.gatewaylb.internal.split;

import org.jspecify.annotations.NullMarked;
