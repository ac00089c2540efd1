package dev.gatewaylb.internal.exchange;

import java.nio.charset.StandardCharsets;

import dev.gatewaylb.internal.upstream.Outcome;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * The answers the gateway writes itself when no upstream answer can be passed on (502,
 * 503, 504, 408): a small JSON body naming the status, the error and the service, as
 * docs/upstreams.md shows them.
 */
final class GatewayAnswer {

	/**
	 * The {@code Retry-After} of a shed request, in seconds.
	 */
	static final String SHED_RETRY_AFTER_SECONDS = "1";

	private GatewayAnswer() {
	}

	/**
	 * Writes the gateway's answer to an attempt that failed, unless the outcome passes
	 * the error on or the response is already on its way.
	 * @param exchange the exchange
	 * @param kind how the attempt failed
	 * @param service the service id, for the body
	 * @param error the error, passed on when the gateway does not answer; {@code null}
	 * when no attempt failed (a shed request)
	 * @return completes when written
	 */
	static Mono<Void> write(ServerWebExchange exchange, Outcome.Kind kind, String service, @Nullable Throwable error) {
		HttpStatus status = kind.status();
		ServerHttpResponse response = exchange.getResponse();
		if (status == null || response.isCommitted()) {
			return (error != null) ? Mono.error(error) : Mono.empty();
		}
		ServerWebExchangeUtils.reset(exchange);
		response.setStatusCode(status);
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		if (kind == Outcome.Kind.REQUEST_BODY_IDLE) {
			// The rest of the body may still be on its way, and a client this slow
			// should not keep the connection: close it, as RFC 9110 says of a 408.
			response.getHeaders().set(HttpHeaders.CONNECTION, "close");
		}
		if (kind == Outcome.Kind.SHED) {
			// Overloaded now, likely not in a second: a well-behaved client waits that
			// long rather than retrying at once.
			response.getHeaders().set(HttpHeaders.RETRY_AFTER, SHED_RETRY_AFTER_SECONDS);
		}
		String body = "{\"status\":" + status.value() + ",\"error\":\"" + kind.error() + "\",\"service\":\""
				+ service.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
	}

}
