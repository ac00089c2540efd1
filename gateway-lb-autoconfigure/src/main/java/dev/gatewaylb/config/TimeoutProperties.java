package dev.gatewaylb.config;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * The timeouts of a service's upstream requests; a key that is not set is {@code null}.
 *
 * @param connect Longest time to open a connection to an endpoint: the whole dial, name
 * resolution, every connect attempt and the TLS handshake.
 * @param response Longest time from sending a request until the response headers arrive;
 * past it the client gets 504. 0 means no limit.
 * @param bodyIdle Longest gap between two chunks of a response body; past it the response
 * is cut off and the endpoint charged a failure. 0 turns it off.
 * @param requestBodyIdle Longest gap between two reads of a client's request body, and
 * the longest wait for its first chunk once the request is on its way to an endpoint;
 * past it the client gets 408 and the upstream connection is let go, charged to nobody. 0
 * turns it off.
 * @param responseWriteIdle Longest time a client may accept no bytes of its answer while
 * the gateway has some to send (nginx's send_timeout); past it the client's connection is
 * closed and the upstream's let go, charged to nobody. 0 turns it off.
 * @param requestBodyMinRate Slowest average rate, per second, of a client's request body
 * once the grace of request-body-idle has passed (time the endpoint is not reading does
 * not count); slower: 408, charged to nobody. 0 turns it off, and so does a
 * request-body-idle of 0.
 * @param happyEyeballs Delay between the connect attempts of one dial when a hostname
 * resolves to several addresses (RFC 8305): the first that connects wins. 0 turns the
 * race off (the addresses are tried one after another).
 * @param responseWriteMinRate Slowest average rate, per second, at which a client may
 * take its answer once the grace of response-write-idle has passed, counting only the
 * time the gateway had bytes for it that it did not take; slower: its connection is
 * closed and the upstream's let go, charged to nobody. 0 turns it off, and so does a
 * response-write-idle of 0.
 */
public record TimeoutProperties(@Nullable Duration connect, @Nullable Duration response, @Nullable Duration bodyIdle,
		@Nullable Duration requestBodyIdle, @Nullable Duration responseWriteIdle, @Nullable DataSize requestBodyMinRate,
		@Nullable Duration happyEyeballs, @Nullable DataSize responseWriteMinRate) {

	public TimeoutProperties {
		if (connect != null && (connect.isNegative() || connect.isZero())) {
			throw new IllegalArgumentException("connect: " + Durations.format(connect) + " (expected: > 0s)");
		}
		if (response != null && response.isNegative()) {
			throw new IllegalArgumentException("response: " + Durations.format(response) + " (expected: >= 0s)");
		}
		if (bodyIdle != null && bodyIdle.isNegative()) {
			throw new IllegalArgumentException("body-idle: " + Durations.format(bodyIdle) + " (expected: >= 0s)");
		}
		if (requestBodyIdle != null && requestBodyIdle.isNegative()) {
			throw new IllegalArgumentException(
					"request-body-idle: " + Durations.format(requestBodyIdle) + " (expected: >= 0s)");
		}
		if (responseWriteIdle != null && responseWriteIdle.isNegative()) {
			throw new IllegalArgumentException(
					"response-write-idle: " + Durations.format(responseWriteIdle) + " (expected: >= 0s)");
		}
		if (requestBodyMinRate != null && requestBodyMinRate.isNegative()) {
			throw new IllegalArgumentException(
					"request-body-min-rate: " + requestBodyMinRate + " (expected: >= 0B, a size per second)");
		}
		if (responseWriteMinRate != null && responseWriteMinRate.isNegative()) {
			throw new IllegalArgumentException(
					"response-write-min-rate: " + responseWriteMinRate + " (expected: >= 0B, a size per second)");
		}
		if (happyEyeballs != null && happyEyeballs.isNegative()) {
			throw new IllegalArgumentException(
					"happy-eyeballs: " + Durations.format(happyEyeballs) + " (expected: >= 0s)");
		}
	}

}
