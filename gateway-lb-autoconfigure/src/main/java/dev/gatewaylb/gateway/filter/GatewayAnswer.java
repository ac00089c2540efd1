package dev.gatewaylb.gateway.filter;

import java.nio.charset.StandardCharsets;

import dev.gatewaylb.gateway.upstream.Outcome;
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

	private GatewayAnswer() {
	}

	/**
	 * Writes the gateway's answer to an attempt that failed, unless the outcome passes
	 * the error on or the response is already on its way.
	 * @param exchange the exchange
	 * @param kind how the attempt failed
	 * @param service the service id, for the body
	 * @param error the error, passed on when the gateway does not answer
	 * @return completes when written
	 */
	static Mono<Void> write(ServerWebExchange exchange, Outcome.Kind kind, String service, Throwable error) {
		HttpStatus status = kind.status();
		ServerHttpResponse response = exchange.getResponse();
		if (status == null || response.isCommitted()) {
			return Mono.error(error);
		}
		ServerWebExchangeUtils.reset(exchange);
		response.setStatusCode(status);
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		if (kind == Outcome.Kind.REQUEST_BODY_IDLE) {
			// The rest of the body may still be on its way, and a client this slow
			// should not keep the connection: close it, as RFC 9110 says of a 408.
			response.getHeaders().set(HttpHeaders.CONNECTION, "close");
		}
		String body = "{\"status\":" + status.value() + ",\"error\":\"" + kind.error() + "\",\"service\":\""
				+ service.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
	}

}
