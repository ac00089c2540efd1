package dev.gatewaylb.config;

import java.time.Duration;

import dev.gatewaylb.internal.request.HashKey;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Balancing settings of one service, or of every service under {@code defaults}, as
 * written: a key that is not set is {@code null}. A key set under {@code services.<id>}
 * wins over the same key under {@code defaults}, one key at a time; a key set in neither
 * place takes its built-in default.
 *
 * @param algorithm Balancing algorithm.
 * @param slowStart Ramp window of an endpoint that joins a serving set: its share grows
 * linearly from a tenth of its weight to its full weight. 0 turns slow start off.
 * @param hashKey Consistent-hash key: client-ip (the client's address, read from
 * X-Forwarded-For only behind trusted-proxies), header:NAME or cookie:NAME.
 * @param hashBalanceFactor Bounded load of consistent-hash: an endpoint takes at most
 * this factor times its weighted share of the requests in flight (the new one included,
 * rounded up), and a key whose endpoint is full moves on along the ring. Above 1, such as
 * 1.25; 0 turns the bound off. Other algorithms ignore it.
 * @param peakEwma Peak-EWMA settings.
 * @param pool Connection pool of the upstream.
 * @param timeouts Timeouts of upstream requests.
 * @param tls TLS towards the upstream.
 * @param http2 Whether to offer HTTP/2 (h2, negotiated by ALPN) to https upstreams.
 * @param health Health checking of the endpoints.
 * @param retry Retries on other endpoints.
 * @param hedge Hedged (backup) requests to another endpoint when an answer is slow.
 * @param concurrency Adaptive concurrency limits of each endpoint, and the partitions
 * that share them.
 * @param affinity Sticky sessions to an endpoint, through a signed cookie every replica
 * honours.
 * @param locality Zone-aware balancing: priority levels by zone, failover, spill, panic.
 * @param mirror Traffic mirroring: a copy of the service's requests to a shadow service,
 * whose answers are compared with the primary's and never reach the client.
 * @param loadReports Weights from the load each endpoint reports of itself (ORCA).
 * @param drain What a drained endpoint's open WebSocket sessions are given.
 */
public record ServiceProperties(@Nullable BalancingAlgorithm algorithm, @Nullable Duration slowStart,
		@Nullable String hashKey, @Nullable Double hashBalanceFactor,
		@NestedConfigurationProperty @Nullable PeakEwmaProperties peakEwma,
		@NestedConfigurationProperty @Nullable PoolProperties pool,
		@NestedConfigurationProperty @Nullable TimeoutProperties timeouts,
		@NestedConfigurationProperty @Nullable TlsProperties tls, @Nullable Boolean http2,
		@NestedConfigurationProperty @Nullable HealthProperties health,
		@NestedConfigurationProperty @Nullable RetryProperties retry,
		@NestedConfigurationProperty @Nullable HedgeProperties hedge,
		@NestedConfigurationProperty @Nullable ConcurrencyProperties concurrency,
		@NestedConfigurationProperty @Nullable AffinityProperties affinity,
		@NestedConfigurationProperty @Nullable LocalityProperties locality,
		@NestedConfigurationProperty @Nullable MirrorProperties mirror,
		@NestedConfigurationProperty @Nullable LoadReportsProperties loadReports,
		@NestedConfigurationProperty @Nullable Drain drain) {

	/**
	 * A layer that sets no key.
	 */
	public static final ServiceProperties NONE = new ServiceProperties(null, null, null, null, null, null, null, null,
			null, null, null, null, null, null, null, null, null, null);

	public ServiceProperties {
		Bounds.checkDuration("slow-start", slowStart, Bounds.MAX_PERIOD);
		if (hashKey != null) {
			HashKey.parse("hash-key", hashKey);
		}
		// Above 1 leaves room above the average; NaN fails both comparisons.
		if (hashBalanceFactor != null
				&& !(hashBalanceFactor == 0 || (hashBalanceFactor > 1 && hashBalanceFactor <= Bounds.MAX_FACTOR))) {
			throw new IllegalArgumentException("hash-balance-factor: " + hashBalanceFactor
					+ " (expected: 0 (off) or > 1, at most " + Bounds.MAX_FACTOR + ", e.g. 1.25)");
		}
	}

	/**
	 * What a drained endpoint's open connections are given; a key that is not set is
	 * {@code null}.
	 *
	 * @param websocketGrace How long the WebSocket sessions of an endpoint that drains,
	 * or leaves the service, are left to close on their own; then each is closed with
	 * status 1001 (going away), the client told to reconnect. 0 leaves them open until
	 * one side closes them.
	 */
	public record Drain(@Nullable Duration websocketGrace) {

		public Drain {
			Bounds.checkDuration("websocket-grace", websocketGrace, Bounds.MAX_TIMEOUT);
		}

	}

}
