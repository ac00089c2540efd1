package dev.gatewaylb.gateway.filter;

import dev.gatewaylb.internal.exchange.Attempt;
import dev.gatewaylb.internal.exchange.RequestBodyIdle;

import java.util.List;

import dev.gatewaylb.internal.exchange.AttemptObservation;
import io.micrometer.observation.Observation;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.NettyRoutingFilter;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * Spring Cloud Gateway's routing filter with one HTTP client per upstream service: an
 * attempt's request goes out through its service's own pool, whose client reports the
 * attempt's progress to it. The exchange names its attempt in an attribute
 * ({@link Attempt#ATTRIBUTE}), the same way for a single attempt and for each attempt of
 * a hedged round. Every other exchange passes on to the gateway's own routing filters, as
 * do WebSocket upgrades, which the gateway's WebSocket routing filter handles (its order
 * follows this one's: {@link FilterOrder}). A request body is sent as the client sends
 * it, bounded by {@code timeouts.request-body-idle} ({@link RequestBodyIdle}).
 * <p>
 * The gateway's routing filter then sees the exchange routed and passes it by.
 */
public final class UpstreamRoutingFilter extends NettyRoutingFilter {

	/**
	 * Creates the filter.
	 * @param httpClient the gateway's shared client (never used for attempts)
	 * @param headersFilters the gateway's header filters
	 * @param properties the gateway's client properties
	 */
	public UpstreamRoutingFilter(HttpClient httpClient, ObjectProvider<List<HttpHeadersFilter>> headersFilters,
			HttpClientProperties properties) {
		super(httpClient, headersFilters, properties);
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Attempt attempt = exchange.getAttribute(Attempt.ATTRIBUTE);
		if (attempt == null || "websocket".equalsIgnoreCase(exchange.getRequest().getHeaders().getUpgrade())) {
			return chain.filter(exchange);
		}
		// The client's body goes out as the client sends it, within request-body-idle;
		// the attempt, in the Reactor context, hears from the client how it went.
		ServerWebExchange routed = RequestBodyIdle.bound(exchange, attempt);
		Object previous = routed.getAttribute(ServerWebExchangeUtils.GATEWAY_OBSERVATION_ATTR);
		Mono<Void> sent = super.filter(routed, chain);
		// The request header filters ran just now: an observation they started is this
		// attempt's, which only its headers or an error reaching the gateway's exception
		// handler would stop. An attempt that ends without headers stops it itself.
		if (routed.getAttribute(ServerWebExchangeUtils.GATEWAY_OBSERVATION_ATTR) instanceof Observation started
				&& started != previous) {
			AttemptObservation observation = new AttemptObservation(started);
			routed.getAttributes().put(ServerWebExchangeUtils.GATEWAY_OBSERVATION_ATTR, observation);
			sent = sent.doOnError(observation::endedWithoutHeaders)
				.doOnCancel(() -> observation.endedWithoutHeaders(null));
		}
		return sent.contextWrite(attempt.context());
	}

	@Override
	protected HttpClient getHttpClient(Route route, ServerWebExchange exchange) {
		Attempt attempt = exchange.getAttribute(Attempt.ATTRIBUTE);
		return (attempt != null) ? attempt.runtime().upstream().client() : super.getHttpClient(route, exchange);
	}

	@Override
	public int getOrder() {
		return FilterOrder.ROUTING;
	}

}
