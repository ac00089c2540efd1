/**
 * Network literals as the configuration spells them ({@link dev.gatewaylb.request.Cidr}),
 * API: a binding record holds them. The parsers of what a client sends are in
 * {@code dev.gatewaylb.internal.request}.
 */
@NullMarked
package dev.gatewaylb.request;

import org.jspecify.annotations.NullMarked;
