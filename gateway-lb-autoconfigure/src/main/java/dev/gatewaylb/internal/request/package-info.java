/**
 * The parsers of what a client sends: network literals ({@link Cidr}), the client's
 * address behind trusted proxies ({@link ClientAddresses}), cookies ({@link Cookies}),
 * header and cookie names ({@link Tokens}), and the spelling of where a per-request key
 * comes from ({@link HashKey}). Pure Java: they never ask a resolver, and the ones that
 * read request headers never throw on what a client sends and take time linear in its
 * length.
 */
@NullMarked
package dev.gatewaylb.internal.request;

import org.jspecify.annotations.NullMarked;
