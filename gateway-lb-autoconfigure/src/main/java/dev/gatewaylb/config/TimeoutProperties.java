package dev.gatewaylb.config;

import java.time.Duration;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The timeouts of a service's upstream requests.
 *
 * @param connect Longest time to open a connection: name resolution, TCP and TLS.
 * @param response Longest time from sending a request until the response headers arrive;
 * past it the client gets 504. 0 means no limit.
 * @param bodyIdle Longest gap between two chunks of a response body; past it the response
 * is cut off and the endpoint charged a failure. 0 turns it off.
 */
public record TimeoutProperties(@DefaultValue("5s") Duration connect, @DefaultValue("30s") Duration response,
		@DefaultValue("0s") Duration bodyIdle) {

	public TimeoutProperties {
		if (connect.isNegative() || connect.isZero()) {
			throw new IllegalArgumentException("connect: " + Durations.format(connect) + " (expected: > 0s)");
		}
		if (response.isNegative()) {
			throw new IllegalArgumentException("response: " + Durations.format(response) + " (expected: >= 0s)");
		}
		if (bodyIdle.isNegative()) {
			throw new IllegalArgumentException("body-idle: " + Durations.format(bodyIdle) + " (expected: >= 0s)");
		}
	}

}
