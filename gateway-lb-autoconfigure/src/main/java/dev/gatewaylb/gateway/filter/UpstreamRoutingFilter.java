package dev.gatewaylb.gateway.filter;

import dev.gatewaylb.internal.exchange.Attempt;
import dev.gatewaylb.internal.exchange.RequestBodyIdle;

import java.net.URI;
import java.util.List;
import java.util.Locale;

import dev.gatewaylb.internal.exchange.AttemptObservation;
import dev.gatewaylb.internal.exchange.ProxiedSocket;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.NettyRoutingFilter;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.socket.server.WebSocketService;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Spring Cloud Gateway's routing filter with one HTTP client per upstream service: an
 * attempt's request goes out through its service's own pool, whose client reports the
 * attempt's progress to it. The exchange names its attempt in an attribute
 * ({@link Attempt#ATTRIBUTE}), the same way for a single attempt and for each attempt of
 * a hedged round. A WebSocket goes to its endpoint through the service's socket client,
 * the endpoint's handshake before the client's upgrade ({@link ProxiedSocket}). Every
 * other exchange passes on to the gateway's own routing filters (their order follows this
 * one's: {@link FilterOrder}). A request body is sent as the client sends it, bounded by
 * {@code timeouts.request-body-idle} ({@link RequestBodyIdle}).
 * <p>
 * The gateway's routing filter then sees the exchange routed and passes it by.
 */
public final class UpstreamRoutingFilter extends NettyRoutingFilter {

	private final HttpClientProperties properties;

	private final @Nullable WebSocketService webSocketService;

	/**
	 * Creates the filter.
	 * @param httpClient the gateway's shared client (never used for attempts)
	 * @param headersFilters the gateway's header filters
	 * @param properties the gateway's client properties
	 */
	public UpstreamRoutingFilter(HttpClient httpClient, ObjectProvider<List<HttpHeadersFilter>> headersFilters,
			HttpClientProperties properties) {
		this(httpClient, headersFilters, properties, null);
	}

	/**
	 * Creates the filter, carrying WebSocket sessions too.
	 * @param httpClient the gateway's shared client (never used for attempts)
	 * @param headersFilters the gateway's header filters
	 * @param properties the gateway's client properties
	 * @param webSocketService the gateway's WebSocket service, which upgrades a client's
	 * connection; {@code null} to leave WebSocket upgrades to Spring Cloud Gateway's own
	 * filter
	 */
	public UpstreamRoutingFilter(HttpClient httpClient, ObjectProvider<List<HttpHeadersFilter>> headersFilters,
			HttpClientProperties properties, @Nullable WebSocketService webSocketService) {
		super(httpClient, headersFilters, properties);
		this.properties = properties;
		this.webSocketService = webSocketService;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Attempt attempt = exchange.getAttribute(Attempt.ATTRIBUTE);
		if (attempt == null || ServerWebExchangeUtils.isAlreadyRouted(exchange)) {
			return chain.filter(exchange);
		}
		URI url = exchange.getRequiredAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		if (isWebSocket(exchange, url)) {
			return (this.webSocketService != null) ? carry(exchange, attempt, url, this.webSocketService, chain)
					: chain.filter(exchange);
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

	/**
	 * Returns whether an exchange is a WebSocket's: an upgrade, or any request of a
	 * {@code ws://} or {@code wss://} route, as Spring Cloud Gateway's WebSocket filter
	 * tells them.
	 */
	private static boolean isWebSocket(ServerWebExchange exchange, URI url) {
		String scheme = url.getScheme();
		return "websocket".equalsIgnoreCase(exchange.getRequest().getHeaders().getUpgrade())
				|| "ws".equalsIgnoreCase(scheme) || "wss".equalsIgnoreCase(scheme);
	}

	/**
	 * Carries a WebSocket to the attempt's endpoint ({@link ProxiedSocket}), with the
	 * request headers Spring Cloud Gateway's WebSocket filter sends: the gateway's
	 * filters applied, without {@code Host} and the handshake's own. Reactor Netty's
	 * handshake names the endpoint in {@code Host} whatever it is given, so
	 * {@code PreserveHostHeader} has no effect here, as on Spring Cloud Gateway.
	 */
	private Mono<Void> carry(ServerWebExchange exchange, Attempt attempt, URI url, WebSocketService service,
			GatewayFilterChain chain) {
		ServerWebExchangeUtils.setAlreadyRouted(exchange);
		HttpHeaders filtered = HttpHeadersFilter.filterRequest(getHeadersFilters(), exchange);
		HttpHeaders headers = new HttpHeaders();
		filtered.forEach((name, values) -> {
			String lower = name.toLowerCase(Locale.ROOT);
			if (!lower.startsWith("sec-websocket") && !lower.equals("host")) {
				headers.addAll(name, values);
			}
		});
		URI socketUrl = UriComponentsBuilder.fromUri(url)
			.scheme(socketScheme(url.getScheme()))
			.build(ServerWebExchangeUtils.containsEncodedParts(url))
			.toUri();
		return ProxiedSocket
			.carry(exchange, attempt, socketUrl, headers, getHeadersFilters(), service, this.properties.getWebsocket())
			.then(chain.filter(exchange))
			.contextWrite(attempt.context());
	}

	private static String socketScheme(String scheme) {
		return switch (scheme.toLowerCase(Locale.ROOT)) {
			case "http" -> "ws";
			case "https" -> "wss";
			default -> scheme;
		};
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
