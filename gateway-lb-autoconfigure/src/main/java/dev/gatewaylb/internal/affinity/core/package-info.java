/**
 * The signer and checker of endpoint affinity cookies: an endpoint's stable id and an
 * HMAC-SHA256 that every replica sharing the secret honours. Pure Java.
 */
@NullMarked
package dev.gatewaylb.internal.affinity.core;

import org.jspecify.annotations.NullMarked;
