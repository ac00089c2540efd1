/**
 * The parsers of what a client sends: network literals ({@link Cidr}), the client's
 * address behind trusted proxies ({@link ClientAddresses}) and cookies ({@link Cookies}).
 * Pure Java: they never ask a resolver, never throw on what a client sends, and take time
 * linear in its length.
 */
@NullMarked
package dev.gatewaylb.request;

import org.jspecify.annotations.NullMarked;
