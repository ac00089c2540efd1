/**
 * Sticky sessions to an endpoint: the signed affinity cookie that names a service's
 * endpoint, which every replica that shares the secret honours. Pure Java.
 */
@NullMarked
package dev.gatewaylb.internal.affinity.core;

import org.jspecify.annotations.NullMarked;
