package dev.gatewaylb.config;

import java.time.Duration;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Balancing settings of one service, or of every service under {@code defaults}. A key
 * set under {@code services.<id>} wins over the same key under {@code defaults}, one key
 * at a time.
 *
 * @param algorithm Balancing algorithm.
 * @param slowStart Ramp window of an endpoint that joins a serving set: its share grows
 * linearly from a tenth of its weight to its full weight. 0 turns slow start off.
 * @param hashKey Consistent-hash key: client-ip (the client's address, read from
 * X-Forwarded-For only behind trusted-proxies), header:NAME or cookie:NAME.
 * @param peakEwma Peak-EWMA settings.
 * @param pool Connection pool of the upstream.
 * @param timeouts Timeouts of upstream requests.
 * @param tls TLS towards the upstream.
 * @param http2 Whether to offer HTTP/2 (h2, negotiated by ALPN) to https upstreams.
 * @param health Health checking of the endpoints.
 * @param retry Retries on other endpoints.
 */
public record ServiceProperties(@DefaultValue("round-robin") BalancingAlgorithm algorithm,
		@DefaultValue("0s") Duration slowStart, @DefaultValue("client-ip") String hashKey,
		@DefaultValue @NestedConfigurationProperty PeakEwmaProperties peakEwma,
		@DefaultValue @NestedConfigurationProperty PoolProperties pool,
		@DefaultValue @NestedConfigurationProperty TimeoutProperties timeouts,
		@DefaultValue @NestedConfigurationProperty TlsProperties tls, @DefaultValue("false") boolean http2,
		@DefaultValue @NestedConfigurationProperty HealthProperties health,
		@DefaultValue @NestedConfigurationProperty RetryProperties retry) {

	/**
	 * RFC 9110 token: what a header or cookie name may contain.
	 */
	static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

	private static final Pattern HASH_KEY = Pattern.compile("client-ip|(header|cookie):" + TOKEN.pattern());

	public ServiceProperties {
		if (slowStart.isNegative()) {
			throw new IllegalArgumentException("slow-start: " + Durations.format(slowStart) + " (expected: >= 0s)");
		}
		if (!HASH_KEY.matcher(hashKey).matches()) {
			throw new IllegalArgumentException(
					"hash-key: '" + hashKey + "' (expected: client-ip, header:NAME or cookie:NAME)");
		}
	}

}
