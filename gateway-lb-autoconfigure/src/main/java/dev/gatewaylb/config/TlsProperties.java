package dev.gatewaylb.config;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * TLS towards a service's upstream.
 *
 * @param trustedCa Resource location of a PEM bundle of CA certificates (for example
 * classpath:ca.pem or file:/etc/ca.pem) that replaces the public roots for this upstream.
 * Empty: the gateway's own trust settings.
 */
public record TlsProperties(@DefaultValue("") String trustedCa) {

}
