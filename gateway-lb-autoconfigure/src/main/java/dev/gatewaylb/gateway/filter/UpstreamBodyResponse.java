package dev.gatewaylb.gateway.filter;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * The exchange's response as the gateway's body writer sees it, which tells the attempt
 * the lease holds two things no client callback can tell in time:
 * <ul>
 * <li>an error that the body publisher itself signals comes from the upstream (its
 * connection broke, or it went idle past {@code timeouts.body-idle}); an error writing to
 * the client does not come through here. The source of the error, not its type, tells
 * whose doing it was;</li>
 * <li>the body's end, before the client can see it: its last byte by the response's
 * {@code Content-Length}, or its completion, which the writer turns into the end of the
 * chunked message. The attempt's claim ends then, so a client that sends its next request
 * the moment it has this answer never finds the endpoint still counting this one in
 * flight. The upstream connection's own end comes later, on its event loop, and may come
 * after that next request was picked.</li>
 * </ul>
 */
final class UpstreamBodyResponse extends ServerHttpResponseDecorator {

	private final ExchangeLease lease;

	UpstreamBodyResponse(ServerHttpResponse delegate, ExchangeLease lease) {
		super(delegate);
		this.lease = lease;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		return super.writeWith(new Body<DataBuffer>(Flux.from(body), this.lease, getHeaders().getContentLength()));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		// A stream of flushed chunks: its end is the outer publisher's completion.
		return super.writeAndFlushWith(new Body<Publisher<? extends DataBuffer>>(Flux.from(body), this.lease, -1));
	}

	/**
	 * The body on its way to the writer, watched for its end and its errors.
	 */
	private static final class Body<T> extends FluxOperator<T, T> {

		private final ExchangeLease lease;

		private final long contentLength;

		Body(Flux<? extends T> source, ExchangeLease lease, long contentLength) {
			super(source);
			this.lease = lease;
			this.contentLength = contentLength;
		}

		@Override
		public void subscribe(CoreSubscriber<? super T> actual) {
			this.source.subscribe(new Watcher<>(actual, this.lease, this.contentLength));
		}

	}

	/**
	 * Passes the body on, ending the current attempt's claim at its last byte. Signals
	 * arrive one at a time (Reactive Streams' rule), so the byte count needs no
	 * synchronization.
	 */
	private static final class Watcher<T> implements CoreSubscriber<T>, Subscription {

		private final CoreSubscriber<? super T> actual;

		private final ExchangeLease lease;

		private long remaining;

		private @Nullable Subscription upstream;

		Watcher(CoreSubscriber<? super T> actual, ExchangeLease lease, long contentLength) {
			this.actual = actual;
			this.lease = lease;
			this.remaining = contentLength;
		}

		@Override
		public Context currentContext() {
			return this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			this.upstream = subscription;
			this.actual.onSubscribe(this);
		}

		@Override
		public void onNext(T item) {
			if (this.remaining > 0 && item instanceof DataBuffer buffer) {
				this.remaining -= buffer.readableByteCount();
				if (this.remaining <= 0) {
					ended();
				}
			}
			this.actual.onNext(item);
		}

		@Override
		public void onError(Throwable error) {
			Attempt attempt = this.lease.current();
			if (attempt != null) {
				attempt.responseFailed(error);
			}
			this.actual.onError(error);
		}

		@Override
		public void onComplete() {
			ended();
			this.actual.onComplete();
		}

		@Override
		public void request(long n) {
			Subscription upstream = this.upstream;
			if (upstream != null) {
				upstream.request(n);
			}
		}

		@Override
		public void cancel() {
			Subscription upstream = this.upstream;
			if (upstream != null) {
				upstream.cancel();
			}
		}

		private void ended() {
			Attempt attempt = this.lease.current();
			if (attempt != null) {
				attempt.release();
			}
		}

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
