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
 */
public record PoolProperties(@Nullable Integer maxConnections, @Nullable Integer maxPending,
		@Nullable Duration pendingTimeout, @Nullable Duration maxIdleTime, @Nullable LoopAffinity loopAffinity) {

	public PoolProperties {
		if (maxConnections != null && maxConnections <= 0) {
			throw new IllegalArgumentException("max-connections: " + maxConnections + " (expected: > 0)");
		}
		if (maxPending != null && maxPending <= 0) {
			throw new IllegalArgumentException("max-pending: " + maxPending + " (expected: > 0)");
		}
		if (pendingTimeout != null && pendingTimeout.isNegative()) {
			throw new IllegalArgumentException(
					"pending-timeout: " + Durations.format(pendingTimeout) + " (expected: >= 0s)");
		}
		if (maxIdleTime != null && (maxIdleTime.isNegative() || maxIdleTime.isZero())) {
			throw new IllegalArgumentException("max-idle-time: " + Durations.format(maxIdleTime) + " (expected: > 0s)");
		}
	}

}
