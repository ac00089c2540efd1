package dev.gatewaylb.internal.exchange;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.gatewaylb.internal.websocket.WebSocketState;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.WebsocketClientSpec;
import reactor.netty.http.websocket.WebsocketInbound;
import reactor.netty.http.websocket.WebsocketOutbound;

import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.StringUtils;
import org.springframework.web.reactive.socket.CloseStatus;
import org.springframework.web.reactive.socket.HandshakeInfo;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.WebSocketMessage;
import org.springframework.web.reactive.socket.WebSocketSession;
import org.springframework.web.reactive.socket.adapter.ReactorNettyWebSocketSession;
import org.springframework.web.reactive.socket.server.WebSocketService;
import org.springframework.web.server.ServerWebExchange;

/**
 * One WebSocket carried between a client and the endpoint its attempt picked: the
 * endpoint's handshake first, the client's upgrade once the endpoint accepted, then the
 * session, whose end releases the attempt's in-flight claim.
 * <p>
 * <b>The endpoint first.</b> The handshake goes to the endpoint through the service's
 * socket client (its dial, TLS trust and header deadline; HTTP/1.1; a connection of its
 * own) before the client's connection is upgraded, so that an endpoint that refuses the
 * connection, breaks it, or answers with a status is judged as any attempt is, and the
 * exchange may retry on another endpoint: nothing has been sent to the client yet. A
 * handshake refused with a status passes that status (and its headers, not its body) to
 * the client. Spring Cloud Gateway's own WebSocket filter upgrades the client first, and
 * can then only close it.
 * <p>
 * <b>In flight until it closes.</b> The endpoint's 101 is the attempt's success; the
 * exchange ends with the client's upgrade, and the exchange's lease hands the claim over
 * to the session ({@link ExchangeLease#handOver}), which releases it when the endpoint's
 * connection closes, however the session ends. Least-requests and power of two choices
 * then balance open sessions. The session itself is charged to nobody: its life is no
 * latency sample and its end no failure.
 * <p>
 * <b>Closing.</b> The session is over when either side closes: a close frame is passed to
 * the other side with its status (a status no endpoint may send is made 1000 or 1002, as
 * Spring Cloud Gateway does); a side whose connection goes without a close frame has the
 * other side closed with 1001 (the client went away) or 1014 (the endpoint's connection
 * was lost).
 * <p>
 * Thread-safety: the handshake's callbacks run on the endpoint connection's event loop,
 * the upgrade on the client's; the sessions are published through volatile fields before
 * the other side can read them, and the end is taken once by compare-and-set.
 */
public final class ProxiedSocket implements WebSocketState.Session {

	/**
	 * What both sides are told when a drained endpoint's grace ran out
	 * ({@code drain.websocket-grace}): 1001, going away.
	 */
	static final CloseStatus DRAINED = new CloseStatus(CloseStatus.GOING_AWAY.getCode(), "endpoint draining");

	/**
	 * What the endpoint is told when the client's connection went without a close frame.
	 */
	static final CloseStatus CLIENT_WENT_AWAY = new CloseStatus(CloseStatus.GOING_AWAY.getCode(), "client went away");

	/**
	 * What the client is told when the endpoint's connection went without a close frame:
	 * 1014, Bad Gateway (IANA's WebSocket close code registry).
	 */
	static final CloseStatus UPSTREAM_LOST = new CloseStatus(1014, "upstream connection lost");

	private static final VarHandle ENDED;

	static {
		try {
			ENDED = MethodHandles.lookup().findVarHandle(ProxiedSocket.class, "ended", boolean.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final Attempt attempt;

	private final ExchangeLease lease;

	/**
	 * The service's open sessions, where this one is registered for its life.
	 */
	private final WebSocketState sessions;

	private final int maxFramePayloadLength;

	/**
	 * Completes the endpoint's side: its connection closes when it does.
	 */
	private final Sinks.Empty<Void> upstreamDone = Sinks.empty();

	/**
	 * Whether the endpoint answered the handshake, 101 or a refusal: what its connection
	 * does after is no failure of the handshake.
	 */
	private volatile boolean answered;

	/**
	 * The endpoint's refusal, when it refused the handshake with a status.
	 */
	private volatile @Nullable HttpResponse refusal;

	/**
	 * Whether the client's session started: the bridge owns the closing from then on.
	 */
	private volatile boolean bridged;

	/**
	 * The two sides once the session started, for a drain to close them.
	 */
	private volatile @Nullable WebSocketSession client;

	private volatile @Nullable WebSocketSession upstream;

	@SuppressWarnings("unused") // accessed through ENDED
	private volatile boolean ended;

	private ProxiedSocket(Attempt attempt, ExchangeLease lease, int maxFramePayloadLength) {
		this.attempt = attempt;
		this.lease = lease;
		this.sessions = attempt.runtime().feature(WebSocketState.class);
		this.maxFramePayloadLength = maxFramePayloadLength;
	}

	/**
	 * Carries an exchange's WebSocket to the endpoint its attempt picked: the endpoint's
	 * handshake, then the client's upgrade and the session.
	 * @param exchange the exchange, a WebSocket handshake
	 * @param attempt the attempt whose endpoint gets it
	 * @param url the endpoint's {@code ws://} or {@code wss://} URL
	 * @param headers the request headers to send, filtered as for any request, without
	 * the handshake's own ({@code Sec-WebSocket-*}, {@code Host})
	 * @param responseFilters the gateway's header filters, for a refusal's headers
	 * @param service the gateway's WebSocket service, which upgrades the client
	 * @param websocket the gateway's WebSocket client settings (frame size, pings)
	 * @return completes when the client's connection is upgraded, or the endpoint's
	 * refusal set on the response; fails as the endpoint's handshake failed (the
	 * attempt's error, for the exchange to judge and perhaps retry)
	 */
	public static Mono<Void> carry(ServerWebExchange exchange, Attempt attempt, URI url, HttpHeaders headers,
			List<HttpHeadersFilter> responseFilters, WebSocketService service,
			HttpClientProperties.Websocket websocket) {
		ServerHttpRequest request = exchange.getRequest();
		ExchangeLease lease = exchange.getAttribute(ExchangeLease.ATTRIBUTE);
		if (!isHandshake(request) || lease == null) {
			// Not a handshake the client's upgrade would accept: its own answer (400,
			// 405), and the endpoint is not contacted.
			return service.handleRequest(exchange, REFUSED);
		}
		WebsocketClientSpec.Builder spec = WebsocketClientSpec.builder().handlePing(websocket.isProxyPing());
		if (websocket.getMaxFramePayloadLength() != null) {
			spec.maxFramePayloadLength(websocket.getMaxFramePayloadLength());
		}
		List<String> protocols = protocols(request.getHeaders());
		if (!protocols.isEmpty()) {
			spec.protocols(String.join(",", protocols));
		}
		WebsocketClientSpec built = spec.build();
		ProxiedSocket socket = new ProxiedSocket(attempt, lease, built.maxFramePayloadLength());
		return socket.connect(url, headers, built)
			.flatMap((upstream) -> socket.accept(exchange, upstream, service))
			.switchIfEmpty(Mono.fromRunnable(() -> socket.refused(exchange, responseFilters)));
	}

	/**
	 * Returns whether a request is a WebSocket handshake Spring's WebSocket service
	 * accepts ({@code HandshakeWebSocketService}'s checks): a GET with the upgrade
	 * headers and a key, or an HTTP/2 CONNECT.
	 */
	static boolean isHandshake(ServerHttpRequest request) {
		HttpHeaders headers = request.getHeaders();
		if ("CONNECT".equals(request.getMethod().name())) {
			return true;
		}
		return HttpMethod.GET.equals(request.getMethod()) && "websocket".equalsIgnoreCase(headers.getUpgrade())
				&& headers.getConnection().stream().anyMatch("upgrade"::equalsIgnoreCase)
				&& headers.getFirst("Sec-WebSocket-Key") != null;
	}

	/**
	 * Returns the sub-protocols the client asks for, in its order.
	 */
	static List<String> protocols(HttpHeaders headers) {
		List<String> values = headers.get("Sec-WebSocket-Protocol");
		if (values == null) {
			return List.of();
		}
		List<String> protocols = new ArrayList<>();
		for (String value : values) {
			protocols.addAll(Arrays.asList(StringUtils.tokenizeToStringArray(value, ",")));
		}
		return protocols;
	}

	/**
	 * The endpoint's handshake: emits its session once it answered 101, completes empty
	 * when it refused with another status (judged on the attempt), fails as the handshake
	 * failed.
	 */
	private Mono<WebSocketSession> connect(URI url, HttpHeaders headers, WebsocketClientSpec spec) {
		HttpClient client = this.attempt.runtime().upstream().socketClient();
		return Mono.create((sink) -> {
			reactor.core.Disposable handshake = client
				.headers((outgoing) -> headers.forEach((name, values) -> outgoing.add(name, values)))
				.websocket(spec)
				.uri(url)
				.handle((in, out) -> opened(in, out, url, sink))
				.contextWrite(sink.contextView())
				.subscribe(null, (error) -> failed(error, sink), () -> {
					if (!this.answered) {
						sink.error(new WebSocketClientHandshakeException(
								"upstream connection closed before the handshake completed"));
					}
				});
			sink.onCancel(handshake);
		});
	}

	/**
	 * The endpoint answered 101, on its connection's event loop: the attempt's success,
	 * and the session's end bound to the connection's close.
	 */
	private Publisher<Void> opened(WebsocketInbound in, WebsocketOutbound out, URI url,
			MonoSink<WebSocketSession> sink) {
		this.answered = true;
		this.attempt.upgraded();
		in.withConnection((connection) -> connection.onDispose(this::ended));
		if (!this.lease.handOver(this.attempt)) {
			// The exchange ended while the endpoint answered (the client left): the
			// claim is released, and the endpoint's connection closes now.
			return Mono.empty();
		}
		HttpHeaders answer = new HttpHeaders();
		in.headers().forEach((header) -> answer.add(header.getKey(), header.getValue()));
		WebSocketSession session = new ReactorNettyWebSocketSession(in, out,
				new HandshakeInfo(url, answer, Mono.empty(), in.selectedSubprotocol()),
				new NettyDataBufferFactory(out.alloc()), this.maxFramePayloadLength);
		sink.success(session);
		return this.upstreamDone.asMono();
	}

	/**
	 * The endpoint's handshake failed: a status other than 101 is the endpoint's answer,
	 * judged by its status (a failure status charged, the claim released) and passed to
	 * the client; anything else fails the attempt.
	 */
	private void failed(Throwable error, MonoSink<WebSocketSession> sink) {
		if (this.answered) {
			// The session's connection: its end is the session's to handle.
			return;
		}
		this.answered = true;
		HttpResponse answer = (error instanceof WebSocketClientHandshakeException refused) ? refused.response() : null;
		if (answer != null) {
			this.refusal = answer;
			this.attempt.responseReceived(answer.status().code());
			this.attempt.responseCompleted();
			sink.success();
			return;
		}
		sink.error(error);
	}

	/**
	 * Answers the client with the endpoint's refusal: its status and headers, no body.
	 */
	private void refused(ServerWebExchange exchange, List<HttpHeadersFilter> responseFilters) {
		HttpResponse answer = this.refusal;
		if (answer == null) {
			return;
		}
		HttpHeaders headers = new HttpHeaders();
		answer.headers().forEach((header) -> headers.add(header.getKey(), header.getValue()));
		HttpHeaders filtered = HttpHeadersFilter.filter(responseFilters, headers, exchange,
				HttpHeadersFilter.Type.RESPONSE);
		filtered.remove(HttpHeaders.CONTENT_LENGTH);
		filtered.remove(HttpHeaders.TRANSFER_ENCODING);
		exchange.getResponse().setStatusCode(HttpStatusCode.valueOf(answer.status().code()));
		exchange.getResponse().getHeaders().putAll(filtered);
	}

	/**
	 * Upgrades the client's connection, on the client's event loop: the session starts
	 * once it is upgraded. A client that cannot be upgraded, or leaves before, closes the
	 * endpoint's connection.
	 */
	private Mono<Void> accept(ServerWebExchange exchange, WebSocketSession upstream, WebSocketService service) {
		exchange.getResponse().setStatusCode(HttpStatus.SWITCHING_PROTOCOLS);
		Bridge bridge = new Bridge(upstream);
		return service.handleRequest(exchange, bridge).doOnSuccess((done) -> {
			// From now on the client's connection is the session's, and closes with it. A
			// session whose handler never ran (a handshake that the client dropped as it
			// was written) would hold the endpoint forever: its close ends it.
			Connection client = clientConnection(exchange);
			if (client != null) {
				client.onDispose(() -> {
					if (!this.bridged) {
						this.upstreamDone.tryEmitEmpty();
					}
				});
			}
		}).doOnError((error) -> this.upstreamDone.tryEmitEmpty()).doOnCancel(this.upstreamDone::tryEmitEmpty);
	}

	private static @Nullable Connection clientConnection(ServerWebExchange exchange) {
		Object request = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
		return (request instanceof Connection connection) ? connection : null;
	}

	/**
	 * The endpoint's connection closed: the session is over, its claim released.
	 */
	private void ended() {
		if (ENDED.compareAndSet(this, false, true)) {
			this.attempt.release();
			this.sessions.closed(this);
			this.upstreamDone.tryEmitEmpty();
		}
	}

	@Override
	public String endpoint() {
		return this.attempt.endpoint().address();
	}

	/**
	 * Closes both sides with 1001, their connections closing with the frames: the
	 * endpoint drained past {@code drain.websocket-grace}. Charged to nobody, as any end
	 * of a session.
	 */
	@Override
	public void goAway() {
		WebSocketSession client = this.client;
		WebSocketSession upstream = this.upstream;
		if (client != null && upstream != null) {
			client.close(DRAINED).onErrorResume((error) -> Mono.empty()).subscribe();
			upstream.close(DRAINED).onErrorResume((error) -> Mono.empty()).subscribe();
		}
	}

	/**
	 * Returns what to tell one side of the status the other side closed with: the same,
	 * but for a status that may not be sent in a close frame.
	 */
	static CloseStatus passed(CloseStatus status, CloseStatus whenGone) {
		int code = status.getCode();
		if (code >= 3000 && code < 5000) {
			return status;
		}
		return switch (code) {
			case 1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014 -> status;
			// No status in the frame: a plain close.
			case 1005 -> CloseStatus.NORMAL;
			// Never in a frame: the connection went without one.
			case 1006, 1015 -> whenGone;
			default -> CloseStatus.PROTOCOL_ERROR;
		};
	}

	/**
	 * Refuses every session: the handler of a request that is no handshake, which
	 * Spring's WebSocket service answers before any session.
	 */
	private static final WebSocketHandler REFUSED = (session) -> session.close(CloseStatus.PROTOCOL_ERROR);

	/**
	 * The session: the client's side, upgraded, joined to the endpoint's. Its
	 * sub-protocol is the one the endpoint chose.
	 */
	private final class Bridge implements WebSocketHandler {

		private final WebSocketSession upstream;

		private final List<String> protocols;

		Bridge(WebSocketSession upstream) {
			this.upstream = upstream;
			String protocol = upstream.getHandshakeInfo().getSubProtocol();
			this.protocols = (protocol != null) ? List.of(protocol) : List.of();
		}

		@Override
		public List<String> getSubProtocols() {
			return this.protocols;
		}

		@Override
		public Mono<Void> handle(WebSocketSession client) {
			ProxiedSocket socket = ProxiedSocket.this;
			socket.bridged = true;
			WebSocketSession upstream = this.upstream;
			socket.client = client;
			socket.upstream = upstream;
			socket.sessions.opened(socket);
			if (socket.ended) {
				// The endpoint's connection closed as the session started: ended() may
				// have looked before it was registered.
				socket.sessions.closed(socket);
			}
			// Messages both ways, retained: each is released once read, and written to
			// the other connection after.
			Mono<Void> toUpstream = upstream.send(client.receive().doOnNext(WebSocketMessage::retain));
			Mono<Void> toClient = client.send(upstream.receive().doOnNext(WebSocketMessage::retain));
			// Whoever closes first, the other side is closed with its status; a side gone
			// without a close frame has none (an empty status).
			Mono<Void> clientClosed = client.closeStatus()
				.defaultIfEmpty(CLIENT_WENT_AWAY)
				.flatMap((status) -> upstream.close(passed(status, CLIENT_WENT_AWAY)));
			Mono<Void> upstreamClosed = upstream.closeStatus()
				.defaultIfEmpty(UPSTREAM_LOST)
				.flatMap((status) -> client.close(passed(status, UPSTREAM_LOST)));
			return Mono.when(quietly(toUpstream), quietly(toClient), quietly(clientClosed), quietly(upstreamClosed))
				.doFinally((signal) -> ProxiedSocket.this.upstreamDone.tryEmitEmpty());
		}

		/**
		 * A side's error (a write to a connection that just closed) ends that direction,
		 * not the session: the closes above end it.
		 */
		private static Mono<Void> quietly(Mono<Void> direction) {
			return direction.onErrorResume((error) -> Mono.empty());
		}

	}

}
