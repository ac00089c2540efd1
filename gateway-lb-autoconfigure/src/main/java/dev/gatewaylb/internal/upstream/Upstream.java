package dev.gatewaylb.internal.upstream;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;

import dev.gatewaylb.internal.settings.UpstreamSettings;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionPoolMetrics;
import reactor.netty.resources.ConnectionProvider;

/**
 * One service's way to its endpoints: a connection provider (one pool per endpoint
 * address, capped and with a bounded pending queue), the HTTP client that sends its
 * requests, and a separate small client for its active health probes, so that a probe
 * never queues behind traffic and a saturated endpoint is not taken for a dead one.
 * <p>
 * Built off the event loops by {@link Upstreams#build}, carried from one runtime of the
 * service to the next while its settings stay, and closed only once no request uses it.
 */
public final class Upstream {

	private final String serviceId;

	private final UpstreamSettings settings;

	private final ConnectionProvider provider;

	private final HttpClient client;

	private final HttpClient socketClient;

	private final ConnectionProvider probeProvider;

	private final HttpClient probeClient;

	private final Map<String, Pool> pools;

	private final EndpointAddresses addresses;

	Upstream(String serviceId, UpstreamSettings settings, ConnectionProvider provider, HttpClient client,
			HttpClient socketClient, ConnectionProvider probeProvider, HttpClient probeClient, Map<String, Pool> pools,
			EndpointAddresses addresses) {
		this.serviceId = serviceId;
		this.settings = settings;
		this.provider = provider;
		this.client = client;
		this.socketClient = socketClient;
		this.probeProvider = probeProvider;
		this.probeClient = probeClient;
		this.pools = pools;
		this.addresses = addresses;
	}

	/**
	 * Returns what the endpoints' names resolved to and where their open connections go.
	 * @return the addresses
	 */
	public EndpointAddresses addresses() {
		return this.addresses;
	}

	/**
	 * Returns the service id.
	 * @return the id
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * Returns the settings the pools and the client were built with.
	 * @return the settings
	 */
	public UpstreamSettings settings() {
		return this.settings;
	}

	/**
	 * Returns the client that sends the service's requests.
	 * @return the client
	 */
	public HttpClient client() {
		return this.client;
	}

	/**
	 * Returns the client of WebSocket sessions: the same dial, TLS trust and header
	 * deadline as {@link #client()}, HTTP/1.1 always (an h2 or h2c service's upgrades
	 * included), and one connection per session outside the pool, closed when the session
	 * ends.
	 * @return the client
	 */
	public HttpClient socketClient() {
		return this.socketClient;
	}

	/**
	 * Returns the client of active health probes: the same TLS trust and connect timeout,
	 * its own connections (one per endpoint).
	 * @return the probe client
	 */
	public HttpClient probeClient() {
		return this.probeClient;
	}

	/**
	 * Closes the pools of an endpoint that left the service: idle connections close now,
	 * connections in use when their response ends. Reactor Netty then removes the pool's
	 * meters. Safe to call for an endpoint that never had a pool.
	 * @param host the endpoint's host, without brackets
	 * @param port the endpoint's port
	 */
	public void endpointLeft(String host, int port) {
		SocketAddress address = InetSocketAddress.createUnresolved(host, port);
		this.provider.disposeWhen(address);
		this.probeProvider.disposeWhen(address);
		this.addresses.forget(EndpointAddresses.key(host, port));
	}

	/**
	 * Returns whether no connection is in use and no request waits for one.
	 * @return whether idle
	 */
	public boolean isIdle() {
		for (Pool pool : this.pools.values()) {
			if (pool.metrics().acquiredSize() > 0 || pool.metrics().pendingAcquireSize() > 0) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns the live counts of the pools, summed over the endpoints.
	 * @return the counts
	 */
	public PoolCounts counts() {
		int active = 0;
		int idle = 0;
		int pending = 0;
		for (Pool pool : this.pools.values()) {
			active += pool.metrics().acquiredSize();
			idle += pool.metrics().idleSize();
			pending += pool.metrics().pendingAcquireSize();
		}
		return new PoolCounts(this.settings.maxConnections(), this.settings.maxPending(), active, idle, pending,
				this.pools.size());
	}

	/**
	 * Closes every pool. Call once nothing uses the upstream any more.
	 * @return completes when closed
	 */
	public Mono<Void> close() {
		return Mono.when(this.provider.disposeLater(), this.probeProvider.disposeLater());
	}

	/**
	 * Live counts of a service's connection pools.
	 *
	 * @param maxConnections the cap per endpoint
	 * @param maxPending the pending limit per endpoint
	 * @param active connections in use, over all endpoints
	 * @param idle idle connections, over all endpoints
	 * @param pending requests waiting for a connection, over all endpoints
	 * @param endpoints endpoints with a pool
	 */
	public record PoolCounts(int maxConnections, int maxPending, int active, int idle, int pending, int endpoints) {
	}

	record Pool(SocketAddress remoteAddress, ConnectionPoolMetrics metrics) {
	}

}
