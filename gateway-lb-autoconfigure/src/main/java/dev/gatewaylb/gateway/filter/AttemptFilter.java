package dev.gatewaylb.gateway.filter;

import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.split.StickyCookie;
import dev.gatewaylb.internal.exchange.ExchangeLease;
import dev.gatewaylb.internal.exchange.ProxiedExchange;
import dev.gatewaylb.internal.exchange.ProxyServices;
import dev.gatewaylb.internal.exchange.Shadows;
import dev.gatewaylb.internal.exchange.SplitRouting;
import dev.gatewaylb.internal.observation.AttemptObservations;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Hands every {@code lb://} exchange to its owner, a {@link ProxiedExchange}, which
 * picks, sends, retries and answers: read that class to follow a request. Ordered just
 * before Spring Cloud Gateway's load-balancer filter ({@link FilterOrder}), which then
 * finds the URL resolved and passes it by. When a route's own {@code Retry} filter runs
 * the chain again, the same owner runs again.
 */
public final class AttemptFilter implements GlobalFilter, Ordered {

	private final ProxyServices services;

	/**
	 * Creates the filter.
	 * @param settings the settings in force
	 * @param runtimes every service's runtime
	 * @param sticky mints sticky cookie values
	 * @param splitCounters counts each split's requests per target
	 * @param rollouts the splits' rollouts
	 * @param use404 whether a service without an endpoint to pick answers 404 instead of
	 * 503, as Spring Cloud Gateway's own
	 * {@code spring.cloud.gateway.server.webflux.loadbalancer.use404} says
	 */
	public AttemptFilter(LiveSettings settings, ServiceRuntimes runtimes, StickyCookie sticky,
			SplitCounters splitCounters, SplitRollouts rollouts, boolean use404) {
		this(settings, runtimes, sticky, splitCounters, rollouts, use404, List::of);
	}

	/**
	 * Creates the filter.
	 * @param settings the settings in force
	 * @param runtimes every service's runtime
	 * @param sticky mints sticky cookie values
	 * @param splitCounters counts each split's requests per target
	 * @param rollouts the splits' rollouts
	 * @param use404 whether a service without an endpoint to pick answers 404 instead of
	 * 503
	 * @param headersFilters the gateway's request header filters, asked when a request is
	 * copied to a shadow service (late: they are beans that may need this filter's)
	 */
	public AttemptFilter(LiveSettings settings, ServiceRuntimes runtimes, StickyCookie sticky,
			SplitCounters splitCounters, SplitRollouts rollouts, boolean use404,
			Supplier<List<HttpHeadersFilter>> headersFilters) {
		this(settings, runtimes, sticky, splitCounters, rollouts, use404, headersFilters, null);
	}

	/**
	 * Creates the filter of a gateway that observes its attempts.
	 * @param settings the settings in force
	 * @param runtimes every service's runtime
	 * @param sticky mints sticky cookie values
	 * @param splitCounters counts each split's requests per target
	 * @param rollouts the splits' rollouts
	 * @param use404 whether a service without an endpoint to pick answers 404 instead of
	 * 503
	 * @param headersFilters the gateway's request header filters
	 * @param observations the application's observation registry: each attempt is a
	 * {@code gateway.lb.attempt} observation; {@code null} or a no-op registry observes
	 * nothing, at no cost to the request path
	 */
	public AttemptFilter(LiveSettings settings, ServiceRuntimes runtimes, StickyCookie sticky,
			SplitCounters splitCounters, SplitRollouts rollouts, boolean use404,
			Supplier<List<HttpHeadersFilter>> headersFilters, @Nullable ObservationRegistry observations) {
		AttemptObservations attempts = AttemptObservations.of(observations);
		this.services = new ProxyServices(settings, runtimes, new SplitRouting(sticky, splitCounters, rollouts), use404,
				new Shadows(once(headersFilters), attempts), attempts);
	}

	/**
	 * Returns a supplier that asks {@code supplier} once, at its first call, and keeps
	 * the answer: a request copied to a shadow must not look a bean up.
	 */
	private static <T> Supplier<T> once(Supplier<T> supplier) {
		AtomicReference<T> answer = new AtomicReference<>();
		return () -> {
			T value = answer.get();
			if (value == null) {
				// Two first calls at once ask twice, and keep the same beans.
				value = supplier.get();
				answer.set(value);
			}
			return value;
		};
	}

	@Override
	public int getOrder() {
		return FilterOrder.ATTEMPT;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		ExchangeLease lease = exchange.getAttribute(ExchangeLease.ATTRIBUTE);
		URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		if (lease == null || url == null || url.getHost() == null) {
			return chain.filter(exchange);
		}
		String schemePrefix = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR);
		if (!"lb".equals(url.getScheme()) && !"lb".equals(schemePrefix)) {
			return chain.filter(exchange);
		}
		ProxiedExchange owner = exchange.getAttribute(ProxiedExchange.ATTRIBUTE);
		if (owner != null) {
			return owner.runAgain(exchange, chain);
		}
		owner = new ProxiedExchange(this.services, lease, exchange, chain, url, schemePrefix);
		exchange.getAttributes().put(ProxiedExchange.ATTRIBUTE, owner);
		return owner.run();
	}

}
