package dev.gatewaylb.gateway;

import dev.gatewaylb.balance.InFlightGuard;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Opens an {@link ExchangeLease} for every exchange routed to {@code lb://} and closes it
 * when the exchange is over: after the response body has been written, on error, and when
 * the client goes away. Closing releases the in-flight guard of the last pick.
 * <p>
 * Ordered just outside {@link NettyWriteResponseFilter}, which writes the body, so "over"
 * includes streaming the body to the client; {@code doFinally} runs once for completion,
 * error and cancellation alike.
 */
public final class InFlightReleaseFilter implements GlobalFilter, Ordered {

	/**
	 * Just outside the filter that writes the response body.
	 */
	public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

	private final BalancerRegistry registry;

	/**
	 * Creates the filter.
	 * @param registry the registry whose clock times failure samples
	 */
	public InFlightReleaseFilter(BalancerRegistry registry) {
		this.registry = registry;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		if (route == null || !"lb".equalsIgnoreCase(route.getUri().getScheme())) {
			return chain.filter(exchange);
		}
		ExchangeLease lease = new ExchangeLease(exchange.getRequest().getRemoteAddress());
		exchange.getAttributes().put(ExchangeLease.ATTRIBUTE, lease);
		return chain.filter(exchange).doOnError((ex) -> {
			// Failures before the headers were answered (and charged) upstream of here;
			// what arrives here failed while the body was streaming: an upstream that
			// went idle past body-idle or broke the connection mid-body.
			InFlightGuard guard = lease.guard();
			String service = lease.serviceId();
			if (guard != null && service != null) {
				guard.recordFailure(UpstreamResponseFilter.FAILURE_LATENCY_NANOS, this.registry.nanoTime());
				this.registry.failed(service, guard);
			}
		}).doFinally((signal) -> lease.close());
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
