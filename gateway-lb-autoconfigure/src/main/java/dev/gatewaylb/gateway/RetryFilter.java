package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.RetrySettings;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import dev.gatewaylb.health.RetryBudget;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Retries a failed attempt on another endpoint, within the service's retry budget, and
 * answers the failures it does not retry.
 * <p>
 * Ordered just before the load-balancer filter, so each retry is a fresh pick (which
 * avoids the endpoints this exchange already tried while others remain) and runs the rest
 * of the chain again. What is retried:
 * <ul>
 * <li>a request that never left the gateway (connect failure), whatever its method;</li>
 * <li>an answer with a status in {@code retry.on-statuses} (or the gateway's own 504),
 * for idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE) whose request body can be sent
 * again: none, or one a filter cached.</li>
 * </ul>
 * Nothing is retried once the response is committed: the response body is written by a
 * filter outside this one, after it decided. A retry the budget refuses returns the
 * original failure and counts as {@code budget}.
 */
public final class RetryFilter implements GlobalFilter, Ordered {

	/**
	 * Just before the load-balancer filter, after the split filter.
	 */
	public static final int ORDER = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER - 1;

	private static final Set<HttpMethod> IDEMPOTENT = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS,
			HttpMethod.PUT, HttpMethod.DELETE);

	private final LiveSettings settings;

	private final LongSupplier nanoClock;

	private final ConcurrentMap<String, Budget> budgets = new ConcurrentHashMap<>();

	private final ServiceCounters retried = new ServiceCounters();

	private final ServiceCounters refused = new ServiceCounters();

	/**
	 * Creates the filter.
	 * @param settings the settings in force
	 * @param nanoClock the clock of the retry budgets
	 */
	public RetryFilter(LiveSettings settings, LongSupplier nanoClock) {
		this.settings = settings;
		this.nanoClock = nanoClock;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		ExchangeLease lease = exchange.getAttribute(ExchangeLease.ATTRIBUTE);
		if (lease == null || url == null || url.getHost() == null || !"lb".equalsIgnoreCase(url.getScheme())) {
			return chain.filter(exchange);
		}
		String service = url.getHost();
		RetrySettings retry = this.settings.get().forService(service).retry();
		RetryBudget budget = budget(service, retry);
		budget.requested();
		return attempt(exchange, chain, url, service, retry, budget, 0);
	}

	private Mono<Void> attempt(ServerWebExchange exchange, GatewayFilterChain chain, URI url, String service,
			RetrySettings retry, RetryBudget budget, int attempt) {
		return chain.filter(exchange).then(Mono.defer(() -> {
			HttpStatusCode status = exchange.getResponse().getStatusCode();
			if (status != null && attempt < retry.attempts() && retry.onStatuses().contains(status.value())
					&& replayable(exchange.getRequest()) && !exchange.getResponse().isCommitted()) {
				if (take(budget, service)) {
					return again(exchange, chain, url, service, retry, budget, attempt);
				}
			}
			return Mono.<Void>empty();
		})).onErrorResume(UpstreamFailure.class, (failure) -> {
			boolean retryable = failure.beforeSending()
					|| (retry.onStatuses().contains(failure.status().value()) && replayable(exchange.getRequest()));
			boolean saturated = failure.status().value() == 503 && failure.beforeSending();
			if (retryable && !saturated && attempt < retry.attempts() && !exchange.getResponse().isCommitted()
					&& take(budget, service)) {
				return again(exchange, chain, url, service, retry, budget, attempt);
			}
			return answer(exchange, failure);
		});
	}

	private Mono<Void> again(ServerWebExchange exchange, GatewayFilterChain chain, URI url, String service,
			RetrySettings retry, RetryBudget budget, int attempt) {
		// Drop what the failed attempt left on the exchange, and route from lb:// again.
		ServerWebExchangeUtils.reset(exchange);
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, url);
		this.retried.of(service).increment();
		return attempt(exchange, chain, url, service, retry, budget, attempt + 1);
	}

	private boolean take(RetryBudget budget, String service) {
		if (budget.tryRetry()) {
			return true;
		}
		this.refused.of(service).increment();
		return false;
	}

	/**
	 * Returns whether the request may be sent again after it reached an upstream: an
	 * idempotent method and no body (no content length above 0, no transfer encoding).
	 */
	static boolean replayable(ServerHttpRequest request) {
		HttpHeaders headers = request.getHeaders();
		return IDEMPOTENT.contains(request.getMethod()) && headers.getContentLength() <= 0
				&& !headers.containsHeader(HttpHeaders.TRANSFER_ENCODING);
	}

	/**
	 * Writes the failure as a small JSON answer, unless the response is already on its
	 * way.
	 */
	private static Mono<Void> answer(ServerWebExchange exchange, UpstreamFailure failure) {
		ServerHttpResponse response = exchange.getResponse();
		if (response.isCommitted()) {
			return Mono.error(failure);
		}
		ServerWebExchangeUtils.reset(exchange);
		response.setStatusCode(failure.status());
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		String body = "{\"status\":" + failure.status().value() + ",\"error\":\"" + failure.getMessage()
				+ "\",\"service\":\"" + failure.service().replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
	}

	private RetryBudget budget(String service, RetrySettings retry) {
		Budget budget = this.budgets.get(service);
		if (budget == null || !budget.settings.equals(retry)) {
			budget = new Budget(retry,
					new RetryBudget(retry.budgetPercent(), retry.budgetMinPerSecond(), this.nanoClock));
			this.budgets.put(service, budget);
		}
		return budget.budget;
	}

	/**
	 * Returns how many retries of a service went out.
	 * @param service the service id
	 * @return the counter
	 */
	public LongAdder retried(String service) {
		return this.retried.of(service);
	}

	/**
	 * Returns how many retries of a service the budget refused.
	 * @param service the service id
	 * @return the counter
	 */
	public LongAdder refusedByBudget(String service) {
		return this.refused.of(service);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	private record Budget(RetrySettings settings, RetryBudget budget) {
	}

}
