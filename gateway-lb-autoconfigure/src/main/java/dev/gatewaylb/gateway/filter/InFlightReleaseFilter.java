package dev.gatewaylb.gateway.filter;

import dev.gatewaylb.internal.exchange.ExchangeLease;
import dev.gatewaylb.internal.exchange.UpstreamBodyResponse;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Opens an {@link ExchangeLease} for every exchange routed to {@code lb://} and closes it
 * when the exchange is over: after the response body has been written, on error, and when
 * the client goes away. Closing releases the in-flight claim of the last attempt, exactly
 * once.
 * <p>
 * Ordered just outside the gateway's filter that writes the body ({@link FilterOrder}),
 * so "over" includes streaming the body to the client; {@code doFinally} runs once for
 * completion, error and cancellation alike. A cancellation is noted before it travels up
 * to the upstream connection, so the body that the gateway then cuts is charged to
 * nobody; an error of the upstream's body is told apart from an error towards the client
 * by where it comes from ({@link UpstreamBodyResponse}).
 */
public final class InFlightReleaseFilter implements GlobalFilter, Ordered {

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		if (route == null || !"lb".equalsIgnoreCase(route.getUri().getScheme())) {
			return chain.filter(exchange);
		}
		ExchangeLease lease = new ExchangeLease();
		exchange.getAttributes().put(ExchangeLease.ATTRIBUTE, lease);
		ServerWebExchange observed = new UpstreamBodyResponse.Exchange(exchange, lease);
		return chain.filter(observed).doOnCancel(lease::clientGone).doFinally((signal) -> lease.close());
	}

	@Override
	public int getOrder() {
		return FilterOrder.EXCHANGE;
	}

}
