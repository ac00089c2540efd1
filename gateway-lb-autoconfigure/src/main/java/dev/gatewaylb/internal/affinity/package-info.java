/**
 * Endpoint affinity ({@code affinity}): a signed cookie that keeps a session on one
 * endpoint across every replica, followed while the endpoint can take it. The pure signer
 * is in {@code core}; this package maps the settings, keeps each service's counts and
 * followed windows, follows and sets the cookie for an exchange, and reports and meters
 * it. Not the split's sticky cookie, which chooses a target service.
 */
@NullMarked
package dev.gatewaylb.internal.affinity;

import org.jspecify.annotations.NullMarked;
