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
 * @param maxDuration Longest an answer may still be streaming after the request was first
 * sent (Envoy's max_stream_duration): past it both connections are closed, charged to
 * nobody. Before the headers, response bounds the wait. 0 means no limit.
 */
public record TimeoutProperties(@Nullable Duration connect, @Nullable Duration response, @Nullable Duration bodyIdle,
		@Nullable Duration requestBodyIdle, @Nullable Duration responseWriteIdle, @Nullable DataSize requestBodyMinRate,
		@Nullable Duration happyEyeballs, @Nullable DataSize responseWriteMinRate, @Nullable Duration maxDuration) {

	/**
	 * The longest delay between the connect attempts of one dial: a minute. RFC 8305
	 * recommends 250 ms and at most 2 s; a longer delay is no race, which 0 turns off.
	 */
	static final Duration MAX_HAPPY_EYEBALLS = Duration.ofMinutes(1);

	/**
	 * The fastest rate that may be asked of a client, sending its body or taking its
	 * answer: 1GB per second, more than any client's link carries.
	 */
	static final DataSize MAX_CLIENT_MIN_RATE = DataSize.ofGigabytes(1);

	public TimeoutProperties {
		Bounds.checkPositiveDuration("connect", connect, Bounds.MAX_TIMEOUT);
		Bounds.checkDuration("response", response, Bounds.MAX_TIMEOUT);
		Bounds.checkDuration("body-idle", bodyIdle, Bounds.MAX_TIMEOUT);
		Bounds.checkDuration("request-body-idle", requestBodyIdle, Bounds.MAX_TIMEOUT);
		Bounds.checkDuration("response-write-idle", responseWriteIdle, Bounds.MAX_TIMEOUT);
		if (requestBodyMinRate != null
				&& (requestBodyMinRate.isNegative() || requestBodyMinRate.compareTo(MAX_CLIENT_MIN_RATE) > 0)) {
			throw new IllegalArgumentException(
					"request-body-min-rate: " + requestBodyMinRate + " (expected: 0B to 1GB, a size per second)");
		}
		if (responseWriteMinRate != null
				&& (responseWriteMinRate.isNegative() || responseWriteMinRate.compareTo(MAX_CLIENT_MIN_RATE) > 0)) {
			throw new IllegalArgumentException(
					"response-write-min-rate: " + responseWriteMinRate + " (expected: 0B to 1GB, a size per second)");
		}
		Bounds.checkDuration("happy-eyeballs", happyEyeballs, MAX_HAPPY_EYEBALLS);
		Bounds.checkDuration("max-duration", maxDuration, Bounds.MAX_TIMEOUT);
	}

}
