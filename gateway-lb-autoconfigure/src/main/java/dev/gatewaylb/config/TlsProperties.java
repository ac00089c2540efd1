package dev.gatewaylb.config;

import org.jspecify.annotations.Nullable;

/**
 * TLS towards a service's upstream; a key that is not set is {@code null}. The bundle is
 * read when the settings are resolved, not here: reading is I/O, and the error must name
 * the layer the location came from.
 *
 * @param trustedCa Resource location of a PEM bundle of CA certificates (for example
 * classpath:ca.pem or file:/etc/ca.pem) that replaces the trust roots for this upstream,
 * and only those: the gateway's client certificate stays. Empty: the gateway's own trust
 * settings.
 */
public record TlsProperties(@Nullable String trustedCa) {

}
