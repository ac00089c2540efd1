package dev.gatewaylb.internal.exchange;

import dev.gatewaylb.internal.settings.UpstreamSettings;
import dev.gatewaylb.internal.upstream.Outcome;
import reactor.core.publisher.Flux;
import reactor.netty.Connection;
import reactor.netty.NettyInbound;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * An attempt's request as the routing client sends it, its body bounded by
 * {@code timeouts.request-body-idle} ({@link IdleLimitedBody}) and a body that fails on
 * the client's side charged to nobody. A client that trickles its body, or stops sending
 * it, would otherwise hold an upstream connection, one of the endpoint's capped few, for
 * as long as it likes.
 * <p>
 * When the limit passes, the attempt is settled {@link Outcome.Kind#REQUEST_BODY_IDLE}
 * (the client's doing, charged to nobody) before anything else can settle it; the routing
 * client then fails the attempt and closes its upstream connection, and the attempt
 * filter answers 408. If the upstream's answer has already started, a 408 can no longer
 * be written and the end of the upstream connection would pass for the end of the answer,
 * so the client's connection is closed instead.
 */
public final class RequestBodyIdle extends ServerHttpRequestDecorator {

	private final Attempt attempt;

	private final ServerWebExchange exchange;

	private final long idleNanos;

	private final long minRate;

	private RequestBodyIdle(ServerWebExchange exchange, Attempt attempt, long idleNanos, long minRate) {
		super(exchange.getRequest());
		this.exchange = exchange;
		this.attempt = attempt;
		this.idleNanos = idleNanos;
		this.minRate = minRate;
	}

	/**
	 * Returns the exchange to route, its request body watched if it has one (bounded when
	 * the service sets a limit); otherwise {@code exchange} itself, at no cost.
	 * @param exchange the exchange
	 * @param attempt the attempt being sent
	 * @return the exchange to route
	 */
	public static ServerWebExchange bound(ServerWebExchange exchange, Attempt attempt) {
		if (!hasBody(exchange.getRequest().getHeaders())) {
			return exchange;
		}
		UpstreamSettings upstream = attempt.runtime().settings().upstream();
		return new Exchange(exchange, new RequestBodyIdle(exchange, attempt,
				upstream.requestBodyIdleTimeout().toNanos(), upstream.requestBodyMinRate()));
	}

	/**
	 * Returns whether a request has a body: a Content-Length above 0, or a transfer
	 * encoding. Reactor Netty gives an HTTP/2 request with a body and no Content-Length
	 * {@code Transfer-Encoding: chunked}, as Netty's HTTP/2-to-HTTP/1 conversion does.
	 */
	static boolean hasBody(HttpHeaders headers) {
		return headers.getContentLength() > 0 || headers.containsHeader(HttpHeaders.TRANSFER_ENCODING);
	}

	@Override
	public Flux<DataBuffer> getBody() {
		Flux<DataBuffer> body = super.getBody().doOnError(this::brokeOff);
		if (this.idleNanos <= 0) {
			return body;
		}
		return new IdleLimitedBody(body, this.idleNanos, this.minRate, this.attempt.runtime().clock(), this::idle);
	}

	/**
	 * The client's request body failed: the client closed its connection (or reset its
	 * stream) in the middle of its upload, or sent a malformed body. That is the client's
	 * doing: the client is noted gone and the attempt settled
	 * {@link Outcome.Kind#CLIENT_GONE} before the routing client fails the upstream
	 * request with it, which would otherwise pass for the endpoint's failure. Which of
	 * the two a transport reports first differs (Reactor Netty on io_uring reports the
	 * body's error, on NIO the cancellation).
	 */
	private void brokeOff(Throwable error) {
		this.attempt.clientFault(Outcome.Kind.CLIENT_GONE);
	}

	/**
	 * The body went idle past the limit: runs once, on the timer's thread, before the
	 * routing client hears of it. The outcome is settled first because what follows
	 * travels on two event loops: once the answer has started, the upstream connection's
	 * end could reach the attempt (as a body that broke off, the endpoint's failure)
	 * before the client's closed connection is noted as the client going away.
	 */
	private void idle() {
		this.attempt.clientFault(Outcome.Kind.REQUEST_BODY_IDLE);
		this.attempt.runtime().counters().slowSenders().increment();
		if (this.attempt.phase() == Outcome.Phase.RECEIVING || this.exchange.getResponse().isCommitted()) {
			closeClientConnection();
		}
	}

	/**
	 * Closes the client's connection (an HTTP/2 client's stream) before the upstream's
	 * answer can end as if whole. The channel itself is closed: Reactor Netty then
	 * cancels the exchange, which releases its lease, whereas disposing the connection's
	 * operations would drop the exchange's subscription without cancelling it.
	 */
	private void closeClientConnection() {
		Object inbound;
		try {
			inbound = ServerHttpRequestDecorator.getNativeRequest(getDelegate());
		}
		catch (IllegalArgumentException ex) {
			// Not a server request of Spring's: the failed upstream body ends it.
			return;
		}
		if (inbound instanceof NettyInbound netty) {
			netty.withConnection(RequestBodyIdle::close);
		}
	}

	private static void close(Connection connection) {
		connection.channel().close();
	}

	/**
	 * The exchange with the bounded request: what the routing filter sends. One
	 * decorator, where {@code exchange.mutate()} would build a builder and a decorator.
	 */
	private static final class Exchange extends ServerWebExchangeDecorator {

		private final RequestBodyIdle request;

		Exchange(ServerWebExchange delegate, RequestBodyIdle request) {
			super(delegate);
			this.request = request;
		}

		@Override
		public ServerHttpRequest getRequest() {
			return this.request;
		}

	}

}
