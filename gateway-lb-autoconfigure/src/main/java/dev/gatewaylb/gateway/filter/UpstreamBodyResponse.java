package dev.gatewaylb.gateway.filter;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * The exchange's response as the gateway's body writer sees it: an error that the body
 * publisher itself signals comes from the upstream (its connection broke, or it went idle
 * past {@code timeouts.body-idle}) and is reported to the lease; an error writing to the
 * client does not come through here. The source of the error, not its type, tells whose
 * doing it was.
 */
final class UpstreamBodyResponse extends ServerHttpResponseDecorator {

	private final ExchangeLease lease;

	UpstreamBodyResponse(ServerHttpResponse delegate, ExchangeLease lease) {
		super(delegate);
		this.lease = lease;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		return super.writeWith(Flux.from(body).doOnError(this.lease::bodyFailed));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return super.writeAndFlushWith(
				Flux.from(body).map((chunk) -> Flux.from(chunk).doOnError(this.lease::bodyFailed)));
	}

	/**
	 * The exchange with this response: what {@link InFlightReleaseFilter} passes down the
	 * chain. One decorator, where {@code exchange.mutate()} would build a builder and a
	 * decorator per request.
	 */
	static final class Exchange extends ServerWebExchangeDecorator {

		private final UpstreamBodyResponse response;

		Exchange(ServerWebExchange delegate, ExchangeLease lease) {
			super(delegate);
			this.response = new UpstreamBodyResponse(delegate.getResponse(), lease);
		}

		@Override
		public ServerHttpResponse getResponse() {
			return this.response;
		}

	}

}
