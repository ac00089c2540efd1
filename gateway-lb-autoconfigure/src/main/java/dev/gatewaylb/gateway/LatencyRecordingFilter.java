package dev.gatewaylb.gateway;

import dev.gatewaylb.balance.InFlightGuard;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Records the time from pick to response headers as a latency sample of the picked
 * endpoint, for peak EWMA.
 * <p>
 * Ordered after the load-balancer filter and before the routing filter: the rest of the
 * chain completes when the routing filter has the upstream's status and headers, so the
 * sample is the upstream's time to answer, not the client's time to download. A failed
 * attempt (connect error, reset, timeout) counts as a sample of at least one second: an
 * endpoint that refuses connections fails fast, and must not look fast. A client that
 * goes away records nothing; that is not the endpoint's doing.
 */
public final class LatencyRecordingFilter implements GlobalFilter, Ordered {

	/**
	 * After the load-balancer filter and its instance-cookie filter.
	 */
	public static final int ORDER = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER + 2;

	/**
	 * What a failed attempt counts as at least: one second.
	 */
	static final long FAILURE_LATENCY_NANOS = 1_000_000_000L;

	private final BalancerRegistry registry;

	/**
	 * Creates the filter.
	 * @param registry the registry whose clock times the samples
	 */
	public LatencyRecordingFilter(BalancerRegistry registry) {
		this.registry = registry;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		ExchangeLease lease = exchange.getAttribute(ExchangeLease.ATTRIBUTE);
		if (lease == null) {
			return chain.filter(exchange);
		}
		InFlightGuard guard = lease.guard();
		if (guard == null) {
			return chain.filter(exchange);
		}
		return chain.filter(exchange)
			.doOnSuccess((done) -> guard.recordLatency(this.registry.nanoTime()))
			.doOnError((ex) -> guard.recordFailure(FAILURE_LATENCY_NANOS, this.registry.nanoTime()));
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
