package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.UpstreamSettings;
import java.net.SocketAddress;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

import io.netty.channel.ChannelOption;
import io.netty.handler.timeout.ReadTimeoutHandler;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.netty.NettyPipeline;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionPoolMetrics;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.DisposableBean;

/**
 * One Reactor Netty connection pool and HTTP client per upstream service, built from the
 * gateway's own client configuration (proxy, SSL, compression, customizers) with the
 * service's pool, timeouts and TLS trust on top.
 * <p>
 * Reactor Netty keeps one pool per endpoint address within a provider, so
 * {@code max-connections} and {@code max-pending} hold per endpoint of the service. The
 * pending queue is always bounded. A service whose upstream settings change gets a new
 * provider at its next request; the old one closes once its connections are released, at
 * most {@link #DISPOSE_TIMEOUT} later.
 * <p>
 * The lookup per request is one map read and one reference comparison.
 */
public final class UpstreamClients implements DisposableBean {

	/**
	 * Longest wait for the requests of a replaced pool to finish before it closes.
	 */
	static final Duration DISPOSE_TIMEOUT = Duration.ofSeconds(60);

	private static final Log logger = LogFactory.getLog(UpstreamClients.class);

	private final Function<ConnectionProvider, HttpClient> gatewayClient;

	private final ConcurrentMap<String, Upstream> upstreams = new ConcurrentHashMap<>();

	private final ServiceCounters saturated = new ServiceCounters();

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	/**
	 * Creates the clients.
	 * @param gatewayClient builds an HTTP client configured like the gateway's own on a
	 * given connection provider
	 */
	public UpstreamClients(Function<ConnectionProvider, HttpClient> gatewayClient) {
		this.gatewayClient = gatewayClient;
	}

	/**
	 * Returns the client of a service, building or rebuilding it when its settings
	 * changed.
	 * @param serviceId the service id
	 * @param settings the service's upstream settings in force
	 * @return the client
	 */
	public HttpClient client(String serviceId, UpstreamSettings settings) {
		Upstream upstream = this.upstreams.get(serviceId);
		if (upstream != null && upstream.settings == settings) {
			return upstream.client;
		}
		return rebuild(serviceId, settings);
	}

	private synchronized HttpClient rebuild(String serviceId, UpstreamSettings settings) {
		Upstream current = this.upstreams.get(serviceId);
		if (current != null && current.settings.equals(settings)) {
			// Equal settings from a new configuration generation: keep the pool.
			this.upstreams.put(serviceId, new Upstream(settings, current.provider, current.client, current.pools));
			return current.client;
		}
		Upstream next = build(serviceId, settings);
		this.upstreams.put(serviceId, next);
		if (current != null) {
			logger.info("Rebuilt the connection pool of " + serviceId + "; the old one closes as its requests finish");
			current.provider.disposeLater().subscribe();
		}
		return next.client;
	}

	private Upstream build(String serviceId, UpstreamSettings settings) {
		Map<String, Pool> pools = new ConcurrentHashMap<>();
		ConnectionProvider provider = ConnectionProvider.builder("gateway-lb-" + serviceId)
			.maxConnections(settings.maxConnections())
			.pendingAcquireMaxCount(settings.maxPending())
			.pendingAcquireTimeout(settings.pendingTimeout())
			.maxIdleTime(settings.maxIdleTime())
			.disposeTimeout(DISPOSE_TIMEOUT)
			.metrics(true, () -> new Registrar(serviceId, pools))
			.build();
		HttpClient client = this.gatewayClient.apply(provider)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
					(int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()));
		if (settings.http2()) {
			client = client.protocol(HttpProtocol.H2, HttpProtocol.HTTP11);
		}
		List<X509Certificate> trusted = settings.trustedCa();
		if (trusted != null || settings.http2()) {
			client = secure(client, trusted, settings.http2());
		}
		Duration headerDeadline = settings.responseTimeout();
		if (!headerDeadline.isZero()) {
			// From the request's last byte to the headers: the wait for a connection is
			// the pool's pending timeout, so a queued request is never charged to an
			// endpoint it has not reached.
			client = client.doOnRequest((request, connection) -> request.responseTimeout(headerDeadline));
		}
		long bodyIdleMillis = settings.bodyIdleTimeout().toMillis();
		client = client.doOnResponse((response, connection) -> {
			// The header deadline ends with the headers; the body has its own idle limit.
			connection.removeHandler(NettyPipeline.ResponseTimeoutHandler);
			if (bodyIdleMillis > 0) {
				// Netty removes the handler when the connection goes back to the pool.
				connection.addHandlerLast("gatewayLbBodyIdle",
						new ReadTimeoutHandler(bodyIdleMillis, TimeUnit.MILLISECONDS));
			}
		});
		return new Upstream(settings, provider, client, pools);
	}

	private static HttpClient secure(HttpClient client, @Nullable List<X509Certificate> trusted, boolean http2) {
		X509Certificate[] roots = (trusted != null) ? trusted.toArray(new X509Certificate[0]) : null;
		if (http2) {
			Http2SslContextSpec spec = Http2SslContextSpec.forClient();
			return client.secure((ssl) -> ssl
				.sslContext((roots != null) ? spec.configure((builder) -> builder.trustManager(roots)) : spec));
		}
		return client.secure((ssl) -> ssl
			.sslContext(Http11SslContextSpec.forClient().configure((builder) -> builder.trustManager(roots))));
	}

	/**
	 * Counts a request answered 503 because a service's pool was saturated.
	 * @param serviceId the service id
	 */
	public void countSaturated(String serviceId) {
		this.saturated.of(serviceId).increment();
	}

	/**
	 * Returns the counter of requests answered 503 for saturation, per service.
	 * @param serviceId the service id
	 * @return the counter
	 */
	public LongAdder saturated(String serviceId) {
		return this.saturated.of(serviceId);
	}

	/**
	 * Returns the live counts of a service's pools, summed over its endpoints.
	 * @param serviceId the service id
	 * @return the counts, or {@code null} before its first request
	 */
	public @Nullable PoolCounts counts(String serviceId) {
		Upstream upstream = this.upstreams.get(serviceId);
		if (upstream == null) {
			return null;
		}
		int active = 0;
		int idle = 0;
		int pending = 0;
		for (Pool pool : upstream.pools.values()) {
			active += pool.metrics.acquiredSize();
			idle += pool.metrics.idleSize();
			pending += pool.metrics.pendingAcquireSize();
		}
		return new PoolCounts(upstream.settings.maxConnections(), upstream.settings.maxPending(), active, idle, pending,
				upstream.pools.size());
	}

	/**
	 * Returns the ids of the services that have a client.
	 * @return the service ids, sorted
	 */
	public Set<String> services() {
		return new TreeSet<>(this.upstreams.keySet());
	}

	/**
	 * Adds a listener told when a per-endpoint pool opens or closes.
	 * @param listener the listener
	 */
	public void addListener(PoolListener listener) {
		this.listeners.add(listener);
	}

	@Override
	public void destroy() {
		this.upstreams.values().forEach((upstream) -> upstream.provider.dispose());
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

	/**
	 * Hears of per-endpoint pools opening and closing.
	 */
	public interface PoolListener {

		/**
		 * Called when Reactor Netty opens the pool of one endpoint.
		 * @param serviceId the service id
		 * @param poolName the provider's name
		 * @param id the pool's id
		 * @param remoteAddress the endpoint
		 * @param metrics the pool's live counts
		 */
		void opened(String serviceId, String poolName, String id, SocketAddress remoteAddress,
				ConnectionPoolMetrics metrics);

		/**
		 * Called when Reactor Netty closes the pool of one endpoint.
		 * @param serviceId the service id
		 * @param poolName the provider's name
		 * @param id the pool's id
		 * @param remoteAddress the endpoint
		 */
		void closed(String serviceId, String poolName, String id, SocketAddress remoteAddress);

	}

	private record Upstream(UpstreamSettings settings, ConnectionProvider provider, HttpClient client,
			Map<String, Pool> pools) {
	}

	private record Pool(SocketAddress remoteAddress, ConnectionPoolMetrics metrics) {
	}

	/**
	 * Keeps each per-endpoint pool's metrics for the counts, and tells the listeners.
	 */
	private final class Registrar implements ConnectionProvider.MeterRegistrar {

		private final String serviceId;

		private final Map<String, Pool> pools;

		Registrar(String serviceId, Map<String, Pool> pools) {
			this.serviceId = serviceId;
			this.pools = pools;
		}

		@Override
		public void registerMetrics(String poolName, String id, SocketAddress remoteAddress,
				ConnectionPoolMetrics metrics) {
			this.pools.put(id, new Pool(remoteAddress, metrics));
			UpstreamClients.this.listeners
				.forEach((listener) -> listener.opened(this.serviceId, poolName, id, remoteAddress, metrics));
		}

		@Override
		public void deRegisterMetrics(String poolName, String id, SocketAddress remoteAddress) {
			this.pools.remove(id);
			UpstreamClients.this.listeners
				.forEach((listener) -> listener.closed(this.serviceId, poolName, id, remoteAddress));
		}

	}

}
