package dev.gatewaylb.config;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The connection pool of a service's upstream; a key that is not set is {@code null}.
 *
 * @param maxConnections Most connections open to each endpoint (host:port) of the service
 * at once; Reactor Netty keeps one pool per endpoint address.
 * @param maxPending Most requests waiting for a connection to an endpoint; one more is
 * answered 503 at once.
 * @param pendingTimeout Longest wait for a connection; past it the request is answered
 * 503. 0 means no time limit (max-pending still bounds the queue).
 * @param maxIdleTime How long an idle connection is kept; keep it below the upstream's
 * keep-alive timeout. With loop affinity each event loop keeps its own idle connections,
 * so this also bounds how long a quiet service keeps loops x connections open.
 * @param loopAffinity Whether a request takes its upstream connection on its own event
 * loop ("preferred": its loop's idle connection, else a new one there, else another
 * loop's idle one; "off": any idle connection, as Reactor Netty's pool does).
 * @param protocol Protocol spoken to the service's http endpoints: http1 (HTTP/1.1), or
 * h2c (HTTP/2 without TLS, by prior knowledge, as gRPC servers speak it). WebSocket
 * upgrades go in HTTP/1.1 either way. For https endpoints, set http2 instead.
 */
public record PoolProperties(@Nullable Integer maxConnections, @Nullable Integer maxPending,
		@Nullable Duration pendingTimeout, @Nullable Duration maxIdleTime, @Nullable LoopAffinity loopAffinity,
		@Nullable Protocol protocol) {

	public PoolProperties {
		Bounds.checkRange("max-connections", maxConnections, 1, Bounds.MAX_PER_ENDPOINT);
		Bounds.checkRange("max-pending", maxPending, 1, Bounds.MAX_PER_ENDPOINT);
		Bounds.checkDuration("pending-timeout", pendingTimeout, Bounds.MAX_TIMEOUT);
		Bounds.checkPositiveDuration("max-idle-time", maxIdleTime, Bounds.MAX_TIMEOUT);
	}

	/**
	 * The protocol spoken to a service's http endpoints.
	 */
	public enum Protocol {

		/**
		 * HTTP/1.1.
		 */
		HTTP1,

		/**
		 * HTTP/2 without TLS, by prior knowledge: every connection starts with the h2
		 * preface.
		 */
		H2C

	}

}
