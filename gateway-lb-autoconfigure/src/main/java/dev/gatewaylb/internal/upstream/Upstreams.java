package dev.gatewaylb.internal.upstream;

import java.net.SocketAddress;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

import dev.gatewaylb.gateway.upstream.UpstreamObserver;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.RequestClock;
import dev.gatewaylb.internal.settings.UpstreamSettings;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.resolver.AddressResolverGroup;
import org.jspecify.annotations.Nullable;
import reactor.netty.Connection;
import reactor.netty.ConnectionObserver;
import reactor.netty.NettyPipeline;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionPoolMetrics;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.tcp.SslProvider;

/**
 * Builds each service's {@link Upstream} from the gateway's own client configuration
 * (proxy, SSL, compression, customizers) with the service's pool, timeouts and TLS trust
 * on top, and tells listeners when a per-endpoint pool opens or closes (for its meters).
 * <p>
 * Reactor Netty opens an endpoint's pool inside the first acquire, on the event loop of
 * the request that asks for it, and reports it there: the upstream's own count of its
 * pools is updated there and then (a map write), but the listeners are told on the
 * executor given, gateway-lb's control thread, so that no meter is built and no
 * listener's lock is taken on an event loop.
 * <p>
 * Reactor Netty keeps one pool per endpoint address within a provider, so
 * {@code max-connections} and {@code max-pending} hold per endpoint of the service. The
 * pending queue is always bounded. With {@code pool.loop-affinity: preferred} (HTTP/1.1)
 * the provider is a {@link LoopLocalConnectionProvider}: one pool per endpoint and event
 * loop under one cap per endpoint, shown to the listeners as one pool per endpoint.
 * <p>
 * The service's client reports each request's progress to the {@link UpstreamObserver} in
 * the request's Reactor context, and takes the header deadline from it; requests without
 * an observer get the service's {@code timeouts.response}.
 */
public final class Upstreams {

	/**
	 * The Reactor context key of the event loop an exchange runs on: a request's new
	 * connection is opened there, and with loop affinity its connection is looked for
	 * there first, whatever thread subscribes. Reactor Netty's own key
	 * ({@code PooledConnectionProvider.CONTEXT_CALLER_EVENTLOOP}, protected; the same
	 * string in 1.3.6 and 1.3.8).
	 */
	public static final String CALLER_EVENT_LOOP = "callereventloop";

	/**
	 * Connections of one endpoint's probe pool: probes of one endpoint never overlap.
	 */
	static final int PROBE_CONNECTIONS = 1;

	private final Function<ConnectionProvider, HttpClient> gatewayClient;

	private final Tls tls;

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private final Executor listenerThread;

	/**
	 * The clock of the body-idle limits: the request clock's time.
	 */
	private final LongSupplier nanoClock;

	/**
	 * The clock of the dials' deadlines (the handshake's is one of its timers) and of the
	 * pending timeouts of loop-affine pools.
	 */
	private final RequestClock requestClock;

	/**
	 * The one resolver of every upstream, or {@code null} for Reactor Netty's default.
	 */
	private final @Nullable AddressResolverGroup<?> resolver;

	/**
	 * How many upstreams each service has had, so that a rebuilt provider gets a name of
	 * its own: its pools' meters must not collide with those of the provider it replaces
	 * while both are open.
	 */
	private final Map<String, Integer> builds = new ConcurrentHashMap<>();

	/**
	 * Creates the factory.
	 * @param gatewayClient builds an HTTP client configured like the gateway's own on a
	 * given connection provider
	 * @param tls makes a service's client speak TLS with the service's trust roots and
	 * protocols
	 * @param control where the listeners are told of pools opening and closing, one event
	 * at a time in order (the control thread, never an event loop), and whose request
	 * clock times the dials and the body-idle limits
	 */
	public Upstreams(Function<ConnectionProvider, HttpClient> gatewayClient, Tls tls, ControlThread control) {
		this(gatewayClient, tls, control, null);
	}

	/**
	 * Creates the factory with the resolver every upstream shares.
	 * @param gatewayClient builds an HTTP client configured like the gateway's own on a
	 * given connection provider
	 * @param tls makes a service's client speak TLS with the service's trust roots and
	 * protocols
	 * @param control where the listeners are told of pools opening and closing, and whose
	 * request clock times the dials and the body-idle limits
	 * @param resolver resolves hostname endpoints ({@link UpstreamResolver}), or
	 * {@code null} for Reactor Netty's default
	 */
	public Upstreams(Function<ConnectionProvider, HttpClient> gatewayClient, Tls tls, ControlThread control,
			@Nullable AddressResolverGroup<?> resolver) {
		this.gatewayClient = gatewayClient;
		this.tls = tls;
		this.listenerThread = control;
		RequestClock clock = control.requestClock();
		this.requestClock = clock;
		this.nanoClock = clock::nanoTime;
		this.resolver = resolver;
	}

	/**
	 * Adds a listener told when a per-endpoint pool opens or closes, on the listener
	 * thread.
	 * @param listener the listener
	 */
	public void addListener(PoolListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Builds the pools and clients of a service. Allocates the providers: call it off the
	 * event loops.
	 * @param serviceId the service id
	 * @param settings its upstream settings
	 * @return the upstream
	 */
	public Upstream build(String serviceId, UpstreamSettings settings) {
		Map<String, Upstream.Pool> pools = new ConcurrentHashMap<>();
		int build = this.builds.merge(serviceId, 1, Integer::sum);
		String name = "gateway-lb-" + serviceId + ((build > 1) ? "-" + build : "");
		ConnectionProvider probeProvider = ConnectionProvider.builder("gateway-lb-probe-" + serviceId)
			.maxConnections(PROBE_CONNECTIONS)
			.pendingAcquireMaxCount(PROBE_CONNECTIONS)
			.maxIdleTime(settings.maxIdleTime())
			.build();
		// The probes' connections are not the pools': they are recorded apart, and not
		// shown.
		HttpClient probeClient = h2c(configure(this.gatewayClient.apply(probeProvider), settings, settings.http2(),
				this.tls, this.resolver, new EndpointAddresses(), this.requestClock), settings);
		Registrar registrar = new Registrar(serviceId, pools);
		ConnectionProvider provider;
		EventLoops loops = loopAffine(settings) ? EventLoops
			.of(probeClient.configuration().loopResources().onClient(probeClient.configuration().isPreferNative()))
				: null;
		if (loops != null && loops.size() > 1) {
			provider = new LoopLocalConnectionProvider(name, settings.maxConnections(), settings.maxPending(),
					settings.pendingTimeout(), settings.maxIdleTime(), loops, this.requestClock,
					(endpoint) -> registrar.registerMetrics(endpoint.poolName(), endpoint.id(), endpoint.address(),
							endpoint),
					(endpoint, id) -> registrar.deRegisterMetrics(endpoint.poolName(), id, endpoint.address()));
		}
		else {
			provider = ConnectionProvider.builder(name)
				.maxConnections(settings.maxConnections())
				.pendingAcquireMaxCount(settings.maxPending())
				.pendingAcquireTimeout(settings.pendingTimeout())
				.maxIdleTime(settings.maxIdleTime())
				.metrics(true, () -> registrar)
				.build();
		}
		EndpointAddresses addresses = new EndpointAddresses();
		HttpClient client = observed(h2c(configure(this.gatewayClient.apply(provider), settings, settings.http2(),
				this.tls, this.resolver, addresses, this.requestClock), settings), settings, this.nanoClock);
		// A WebSocket holds its connection for the session's life: a connection of its
		// own, outside the pool, so that open sessions never take the places of requests.
		// HTTP/1.1 whatever the service speaks: the upgrade is an HTTP/1.1 exchange.
		HttpClient socketClient = observedHandshakes(
				configure(this.gatewayClient.apply(ConnectionProvider.newConnection()), settings, false, this.tls,
						this.resolver, addresses, this.requestClock)
					.protocol(HttpProtocol.HTTP11),
				settings);
		return new Upstream(serviceId, settings, provider, client, socketClient, probeProvider, probeClient, pools,
				addresses);
	}

	/**
	 * Whether a service's connections are grouped by event loop: asked for, and over
	 * HTTP/1.1 only (an h2 connection carries the requests of every loop: Reactor Netty's
	 * h2 pool keeps its own).
	 */
	private static boolean loopAffine(UpstreamSettings settings) {
		return settings.loopAffine() && !settings.http2() && !settings.h2c();
	}

	/**
	 * The dial (the connect timeout over resolution, attempts and TLS, the race of a
	 * name's addresses) through the shared resolver, h2 when {@code http2}, the TLS trust
	 * of the service.
	 */
	private static HttpClient configure(HttpClient client, UpstreamSettings settings, boolean http2, Tls tls,
			@Nullable AddressResolverGroup<?> resolver, EndpointAddresses addresses, RequestClock clock) {
		long connectNanos = settings.connectTimeout().toNanos();
		HttpClient configured = client
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
					(int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()))
			// One handler per connection, made when the connection is: it sees the
			// connect before the transport does.
			.doOnChannelInit((observer, channel, remoteAddress) -> channel.pipeline()
				.addFirst(DialHandler.NAME, new DialHandler(connectNanos, addresses, clock)))
			// Once per connection, in the raw pipeline (not a handler of one exchange):
			// an HTTP/1.1 connection's codec is there when it is connected.
			.doOnConnected((connection) -> {
				ChannelPipeline pipeline = connection.channel().pipeline();
				if (pipeline.get(NettyPipeline.HttpCodec) != null && pipeline.get(InformationalAnswers.NAME) == null) {
					pipeline.addAfter(NettyPipeline.HttpCodec, InformationalAnswers.NAME, new InformationalAnswers());
				}
			});
		if (resolver != null) {
			configured = configured.resolver(DialResolver.group(resolver, connectNanos,
					settings.happyEyeballs().toNanos(), addresses, clock::nanoTime));
		}
		if (http2) {
			configured = configured.protocol(HttpProtocol.H2, HttpProtocol.HTTP11);
		}
		List<X509Certificate> trusted = settings.trustedCa();
		if (trusted != null || http2) {
			configured = tls.secure(configured, trusted, http2);
		}
		return configured;
	}

	/**
	 * The header deadline, the body-idle limit, and the hooks that tell the attempt in
	 * the request's context how its request and response went.
	 */
	private static HttpClient observed(HttpClient client, UpstreamSettings settings, LongSupplier nanoClock) {
		Duration headerDeadline = settings.responseTimeout().isZero() ? null : settings.responseTimeout();
		long bodyIdleMillis = settings.bodyIdleTimeout().toMillis();
		// The attempt is looked up in the request's context once, when the request is
		// prepared; the later callbacks find it on the channel (UpstreamCall).
		return client.doOnRequest((request, connection) -> {
			UpstreamObserver observer = UpstreamObserver.in(request.currentContextView());
			// From the request's last byte to the headers: the wait for a connection is
			// bounded by the pool's pending timeout instead, so a queued request is never
			// charged to an endpoint it has not reached.
			Duration deadline = (observer != null) ? observer.requestPrepared(connection.channel().eventLoop())
					: headerDeadline;
			UpstreamCall.prepared(request, connection.channel(), observer, deadline);
		}).doAfterRequest((request, connection) -> {
			UpstreamCall call = UpstreamCall.of(request, connection.channel());
			if (call != null) {
				call.sent();
			}
		}).doOnResponse((response, connection) -> {
			if (bodyIdleMillis > 0) {
				// Netty removes the handler when the connection goes back to the pool. It
				// counts only while the gateway reads: a slow client's stall is not the
				// endpoint's.
				connection.addHandlerLast(BodyIdleHandler.NAME, new BodyIdleHandler(bodyIdleMillis, nanoClock));
			}
			UpstreamCall call = UpstreamCall.of(response, connection.channel());
			if (call != null) {
				// The header deadline ends with the headers; the body has its own idle
				// limit.
				call.headers(response.status().code());
			}
		}).doAfterResponseSuccess((response, connection) -> {
			UpstreamCall call = UpstreamCall.end(response, connection.channel());
			UpstreamObserver observer = (call != null) ? call.observer() : null;
			if (observer != null) {
				observer.responseCompleted();
			}
		}).doOnResponseError((response, error) -> {
			UpstreamCall call = (response instanceof Connection connection)
					? UpstreamCall.end(response, connection.channel()) : null;
			UpstreamObserver observer = (call != null) ? call.observer() : null;
			if (observer != null) {
				observer.responseFailed(error);
			}
		}).observe((connection, state) -> {
			if (state == ConnectionObserver.State.DISCONNECTING || state == ConnectionObserver.State.RELEASED) {
				// However the request ended (an error before its headers reaches no
				// callback above), its deadline must not wait in the event loop's queue.
				UpstreamCall.forget(connection.channel());
			}
		});
	}

	/**
	 * Makes a client speak h2 without TLS, by prior knowledge, when the service asks for
	 * it ({@code pool.protocol: h2c}); a client for {@code http2: true} (h2 by ALPN) or
	 * HTTP/1.1 as it is.
	 */
	private static HttpClient h2c(HttpClient client, UpstreamSettings settings) {
		return settings.h2c() ? client.protocol(HttpProtocol.H2C) : client;
	}

	/**
	 * The header deadline of a WebSocket handshake, and the hooks that tell the attempt
	 * in the request's context how far its handshake got: prepared and sent at once (the
	 * handshake is a GET without a body, and Reactor Netty reports no end of sending for
	 * it), then its 101. The end of the session is the session's to report: a handshake
	 * refused, or a session that ends, reaches no hook here, and no body-idle limit
	 * applies to a session that may stay quiet for hours.
	 */
	private static HttpClient observedHandshakes(HttpClient client, UpstreamSettings settings) {
		Duration headerDeadline = settings.responseTimeout().isZero() ? null : settings.responseTimeout();
		return client.doOnRequest((request, connection) -> {
			UpstreamObserver observer = UpstreamObserver.in(request.currentContextView());
			Duration deadline = (observer != null) ? observer.requestPrepared(connection.channel().eventLoop())
					: headerDeadline;
			UpstreamCall.handshake(connection.channel(), observer, deadline);
		}).doOnResponse((response, connection) -> {
			UpstreamCall call = UpstreamCall.take(connection.channel());
			if (call != null) {
				call.headers(response.status().code());
			}
		}).observe((connection, state) -> {
			if (state == ConnectionObserver.State.DISCONNECTING || state == ConnectionObserver.State.RELEASED) {
				UpstreamCall.forget(connection.channel());
			}
		});
	}

	/**
	 * Makes a service's client speak TLS: the service's trust roots, h2 offered through
	 * ALPN or not, and whatever else the gateway's own TLS settings hold.
	 */
	@FunctionalInterface
	public interface Tls {

		/**
		 * TLS from the service's settings alone: its trust roots, else the JDK's; no
		 * client certificate. For a gateway without TLS settings of its own.
		 */
		Tls JDK = (client, trustedCa, http2) -> {
			X509Certificate[] roots = (trustedCa != null) ? trustedCa.toArray(new X509Certificate[0]) : null;
			SslProvider.GenericSslContextSpec<SslContextBuilder> spec = http2 ? Http2SslContextSpec.forClient()
					: Http11SslContextSpec.forClient();
			return client
				.secure((ssl) -> ssl.sslContext((roots != null) ? spec.configure((b) -> b.trustManager(roots)) : spec));
		};

		/**
		 * Returns {@code client} speaking TLS to one service's endpoints. Called off the
		 * event loops, when the service's upstream is built.
		 * @param client the client configured like the gateway's own
		 * @param trustedCa the service's {@code tls.trusted-ca}, which replaces every
		 * other trust root, or {@code null} to keep the gateway's
		 * @param http2 whether to offer h2 through ALPN
		 * @return the client
		 */
		HttpClient secure(HttpClient client, @Nullable List<X509Certificate> trustedCa, boolean http2);

	}

	/**
	 * The pool figures of one endpoint whose connections are grouped by event loop: the
	 * sums over the loops, and how many connections were borrowed from another loop.
	 */
	public interface LoopLocalPool extends ConnectionPoolMetrics {

		/**
		 * Returns how many times a request took an idle connection of another event loop
		 * because its own loop had none and the endpoint's cap was reached.
		 * @return the count since the pools opened
		 */
		long borrowed();

	}

	/**
	 * Hears of per-endpoint pools opening and closing, on the listener thread, in the
	 * order Reactor Netty reported them.
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

	/**
	 * Keeps each per-endpoint pool's metrics for the counts, on the event loop that opens
	 * or closes the pool, and hands the listeners' calls to the listener thread.
	 */
	private final class Registrar implements ConnectionProvider.MeterRegistrar {

		private final String serviceId;

		private final Map<String, Upstream.Pool> pools;

		Registrar(String serviceId, Map<String, Upstream.Pool> pools) {
			this.serviceId = serviceId;
			this.pools = pools;
		}

		@Override
		public void registerMetrics(String poolName, String id, SocketAddress remoteAddress,
				ConnectionPoolMetrics metrics) {
			this.pools.put(id, new Upstream.Pool(remoteAddress, metrics));
			tell((listener) -> listener.opened(this.serviceId, poolName, id, remoteAddress, metrics));
		}

		@Override
		public void deRegisterMetrics(String poolName, String id, SocketAddress remoteAddress) {
			this.pools.remove(id);
			tell((listener) -> listener.closed(this.serviceId, poolName, id, remoteAddress));
		}

		private void tell(Consumer<PoolListener> event) {
			List<PoolListener> listeners = Upstreams.this.listeners;
			if (!listeners.isEmpty()) {
				Upstreams.this.listenerThread.execute(() -> listeners.forEach(event));
			}
		}

	}

}
