package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.LiveSettings;
import java.io.IOException;
import java.net.ConnectException;

import dev.gatewaylb.balance.InFlightGuard;
import io.netty.handler.timeout.ReadTimeoutException;
import reactor.netty.channel.AbortedException;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;

/**
 * Handles an upstream attempt up to its response headers: the service's header deadline,
 * the latency sample, and the answers for the failures Spring Cloud Gateway would turn
 * into 500.
 * <p>
 * Ordered after the load-balancer filter and before the routing filter: the rest of the
 * chain completes when the routing filter has the upstream's status and headers, so the
 * latency sample is the upstream's time to answer, not the client's time to download. The
 * header deadline ({@code timeouts.response}) runs in the service's client, from the
 * request sent to the headers; the wait for a connection is bounded by the pool.
 * <ul>
 * <li>Pool saturated (pending queue full, or pending timeout): 503 "upstream saturated",
 * counted per service. The endpoint was not contacted and is not charged.</li>
 * <li>Connect failure (refused, connect timeout, or a pooled connection that closed
 * before the request was written): 502, the endpoint is charged, and the request, which
 * never left, may be retried whatever its method.</li>
 * <li>Connection lost before the headers: 502, the endpoint is charged.</li>
 * <li>No headers within {@code timeouts.response} of sending: 504, the endpoint is
 * charged.</li>
 * <li>A 5xx answer is passed on and charged to the endpoint.</li>
 * </ul>
 * A failure counts as a latency sample of at least one second, so an endpoint that
 * refuses connections quickly does not look fast. A client that goes away records
 * nothing; that is not the endpoint's doing.
 */
public final class UpstreamResponseFilter implements GlobalFilter, Ordered {

	/**
	 * After the load-balancer filter and its instance-cookie filter.
	 */
	public static final int ORDER = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER + 2;

	/**
	 * What a failed attempt counts as at least: one second.
	 */
	static final long FAILURE_LATENCY_NANOS = 1_000_000_000L;

	private final BalancerRegistry registry;

	private final LiveSettings settings;

	private final UpstreamClients clients;

	/**
	 * Creates the filter.
	 * @param registry the registry whose clock times the samples
	 * @param settings the settings in force
	 * @param clients the per-service clients, which count saturation
	 */
	public UpstreamResponseFilter(BalancerRegistry registry, LiveSettings settings, UpstreamClients clients) {
		this.registry = registry;
		this.settings = settings;
		this.clients = clients;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		ExchangeLease lease = exchange.getAttribute(ExchangeLease.ATTRIBUTE);
		InFlightGuard guard = (lease != null) ? lease.guard() : null;
		String service = (lease != null) ? lease.serviceId() : null;
		if (guard == null || service == null) {
			return chain.filter(exchange);
		}
		return chain.filter(exchange)
			.doOnSuccess((done) -> answered(exchange, guard, service))
			.onErrorMap((ex) -> !(ex instanceof UpstreamFailure), (ex) -> failed(guard, service, ex));
	}

	private void answered(ServerWebExchange exchange, InFlightGuard guard, String service) {
		guard.recordLatency(this.registry.nanoTime());
		HttpStatusCode status = exchange.getResponse().getStatusCode();
		if (status != null && status.is5xxServerError()) {
			this.registry.failed(service, guard);
		}
		else {
			this.registry.succeeded(service, guard);
		}
	}

	private Throwable failed(InFlightGuard guard, String service, Throwable ex) {
		if (isSaturation(ex)) {
			// No endpoint was contacted: nothing to charge.
			this.clients.countSaturated(service);
			return new UpstreamFailure(HttpStatus.SERVICE_UNAVAILABLE, "upstream saturated", service, true, ex);
		}
		guard.recordFailure(FAILURE_LATENCY_NANOS, this.registry.nanoTime());
		if (causedBy(ex, ReadTimeoutException.class)) {
			this.registry.failed(service, guard);
			return new UpstreamFailure(HttpStatus.GATEWAY_TIMEOUT, "upstream response timeout", service, false, ex);
		}
		if (causedBy(ex, ConnectException.class) || closedBeforeSending(ex)) {
			this.registry.failed(service, guard);
			return new UpstreamFailure(HttpStatus.BAD_GATEWAY, "upstream connect failed", service, true, ex);
		}
		if (causedBy(ex, AbortedException.class)) {
			this.registry.failed(service, guard);
			return new UpstreamFailure(HttpStatus.BAD_GATEWAY, "upstream connection failed", service, false, ex);
		}
		if (causedBy(ex, IOException.class)) {
			this.registry.failed(service, guard);
			return new UpstreamFailure(HttpStatus.BAD_GATEWAY, "upstream connection failed", service, false, ex);
		}
		return ex;
	}

	/**
	 * Returns whether {@code ex} comes from a full pending queue or a pending timeout.
	 * Reactor Netty shades reactor-pool's exceptions into an internal package, so they
	 * are recognised by name rather than imported.
	 */
	static boolean isSaturation(Throwable ex) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			String name = t.getClass().getName();
			if (name.endsWith("PoolAcquirePendingLimitException") || name.endsWith("PoolAcquireTimeoutException")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether a pooled connection closed before the request was written: the
	 * upstream got nothing, as with a connect failure. Reactor Netty says so only in the
	 * message of its {@link AbortedException}.
	 */
	static boolean closedBeforeSending(Throwable ex) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (t instanceof AbortedException && t.getMessage() != null && t.getMessage().contains("BEFORE send")) {
				return true;
			}
		}
		return false;
	}

	private static boolean causedBy(Throwable ex, Class<? extends Throwable> type) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (type.isInstance(t)) {
				return true;
			}
		}
		return false;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
