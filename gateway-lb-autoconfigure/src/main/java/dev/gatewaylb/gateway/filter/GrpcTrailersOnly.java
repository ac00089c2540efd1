package dev.gatewaylb.gateway.filter;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.AbstractServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * Passes a gRPC trailers-only answer on as trailers: the endpoint's one HEADERS frame (an
 * error answered at once, {@code NOT_FOUND} with its details) carries the call's status,
 * its message, its {@code grpc-status-details-bin} and any metadata the server added, and
 * the client reads all of them as trailers.
 * <p>
 * The gateway answers with headers and a body, so they would reach the client as headers,
 * where grpc-java does not look for a status: Spring Cloud Gateway's own gRPC filter
 * copies {@code grpc-status} and {@code grpc-message} into trailers, and every other key
 * (the error's details, the server's metadata) stays behind among the headers and is
 * lost. Here every key but {@code content-type} moves to the trailers, as the gRPC
 * protocol defines a trailers-only answer (HTTP status, content type, trailers), and the
 * client gets headers, no message, then every trailer the endpoint sent.
 * <p>
 * Answers with messages are untouched: their status arrives in the endpoint's own
 * trailers, which Spring Cloud Gateway passes on whole. For any other answer it reads one
 * response header; no state.
 */
public final class GrpcTrailersOnly implements HttpHeadersFilter, Ordered {

	private static final String GRPC_STATUS = "grpc-status";

	@Override
	public HttpHeaders filter(HttpHeaders headers, ServerWebExchange exchange) {
		if (headers.getFirst(GRPC_STATUS) == null || !isGrpc(exchange)) {
			return headers;
		}
		HttpServerResponse nativeResponse = nativeResponse(exchange.getResponse());
		if (nativeResponse == null) {
			return headers;
		}
		HttpHeaders kept = new HttpHeaders();
		HttpHeaders trailers = new HttpHeaders();
		for (Map.Entry<String, List<String>> header : headers.headerSet()) {
			(HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(header.getKey()) ? kept : trailers).addAll(header.getKey(),
					header.getValue());
		}
		// Set, not added: Spring Cloud Gateway's filter may have set grpc-status and
		// grpc-message already.
		nativeResponse.trailerHeaders((netty) -> trailers.forEach(netty::set));
		return kept;
	}

	private static boolean isGrpc(ServerWebExchange exchange) {
		String contentType = exchange.getRequest().getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
		return contentType != null && contentType.regionMatches(true, 0, "application/grpc", 0, 16);
	}

	private static @Nullable HttpServerResponse nativeResponse(ServerHttpResponse response) {
		ServerHttpResponse unwrapped = response;
		while (unwrapped instanceof ServerHttpResponseDecorator decorator) {
			unwrapped = decorator.getDelegate();
		}
		return (unwrapped instanceof AbstractServerHttpResponse server
				&& server.getNativeResponse() instanceof HttpServerResponse netty) ? netty : null;
	}

	@Override
	public boolean supports(Type type) {
		return type == Type.RESPONSE;
	}

	/**
	 * After Spring Cloud Gateway's gRPC filter (order 0), which then finds nothing to do
	 * or sets two of the same trailers to the same values.
	 */
	@Override
	public int getOrder() {
		return 1;
	}

}
