package dev.gatewaylb.internal.exchange;

import java.util.HashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;

import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.AbstractServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * The exchange one attempt of a hedged race sees: its own attributes (the endpoint's URL,
 * the upstream response and connection the routing filter puts there) and its own
 * response status and headers, so that two attempts running at once never write the same
 * exchange. The attempt whose headers come first is applied to the real exchange
 * ({@link #applyTo}); the other's are dropped with it.
 * <p>
 * A backup sends no request body: only requests without one are hedged, and the client's
 * body can be read once.
 */
final class AttemptExchange extends ServerWebExchangeDecorator {

	private final Map<String, Object> attributes;

	private final CapturedResponse response;

	private final @Nullable ServerHttpRequest request;

	/**
	 * Creates the exchange of one attempt.
	 * @param exchange the real exchange, as its owner has it
	 * @param backup whether the attempt is a backup, which sends no body
	 */
	AttemptExchange(ServerWebExchange exchange, boolean backup) {
		super(exchange);
		this.attributes = new HashMap<>(exchange.getAttributes());
		this.response = new CapturedResponse(exchange.getResponse().bufferFactory());
		this.request = backup ? new WithoutBody(exchange.getRequest()) : null;
	}

	@Override
	public ServerHttpRequest getRequest() {
		return (this.request != null) ? this.request : super.getRequest();
	}

	@Override
	public ServerHttpResponse getResponse() {
		return this.response;
	}

	@Override
	public Map<String, Object> getAttributes() {
		return this.attributes;
	}

	/**
	 * Gives the winner's status, headers and attributes to the real exchange: what Spring
	 * Cloud Gateway's routing filter would have written there had the attempt run alone.
	 * @param exchange the real exchange
	 */
	void applyTo(ServerWebExchange exchange) {
		ServerHttpResponse target = exchange.getResponse();
		HttpStatusCode status = this.response.getStatusCode();
		if (status != null) {
			target.setStatusCode(status);
		}
		HttpHeaders headers = this.response.getHeaders();
		if (!headers.containsHeader(HttpHeaders.TRANSFER_ENCODING)
				&& headers.containsHeader(HttpHeaders.CONTENT_LENGTH)) {
			target.getHeaders().remove(HttpHeaders.TRANSFER_ENCODING);
		}
		target.getHeaders().addAll(headers);
		Map<String, Object> attributes = exchange.getAttributes();
		attributes.putAll(this.attributes);
		if (!this.attributes.containsKey(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR)) {
			attributes.remove(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR);
		}
	}

	/**
	 * Closes the upstream connection of an attempt that got its headers but lost the
	 * race: nobody will read its body, so the connection cannot go back to the pool.
	 */
	void discard() {
		if (this.attributes.get(ServerWebExchangeUtils.CLIENT_RESPONSE_CONN_ATTR) instanceof Connection connection) {
			connection.dispose();
		}
	}

	/**
	 * A response that only holds a status and headers until the race is decided. An
	 * {@link AbstractServerHttpResponse}, so that the routing filter can set a status
	 * Spring does not name on it, as it does on a real one; nothing is ever written
	 * through it.
	 */
	static final class CapturedResponse extends AbstractServerHttpResponse {

		CapturedResponse(DataBufferFactory bufferFactory) {
			super(bufferFactory);
		}

		@Override
		@SuppressWarnings("unchecked")
		public <T> T getNativeResponse() {
			return (T) this;
		}

		@Override
		protected Mono<Void> writeWithInternal(Publisher<? extends DataBuffer> body) {
			return Mono.error(new IllegalStateException("a hedged attempt's response is never written"));
		}

		@Override
		protected Mono<Void> writeAndFlushWithInternal(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			return Mono.error(new IllegalStateException("a hedged attempt's response is never written"));
		}

		@Override
		protected void applyStatusCode() {
		}

		@Override
		protected void applyHeaders() {
		}

		@Override
		protected void applyCookies() {
		}

	}

	/**
	 * The client's request with no body, for a backup.
	 */
	private static final class WithoutBody extends ServerHttpRequestDecorator {

		WithoutBody(ServerHttpRequest delegate) {
			super(delegate);
		}

		@Override
		public Flux<DataBuffer> getBody() {
			return Flux.empty();
		}

	}

}
