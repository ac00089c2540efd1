package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.LiveSettings;
import java.util.List;

import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.filter.NettyRoutingFilter;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Spring Cloud Gateway's routing filter with one HTTP client per upstream service: a
 * request picked from a gateway-lb service goes out through that service's own pool;
 * every other request through the gateway's shared client, exactly as before.
 * <p>
 * Ordered just before the gateway's own routing filter, which then sees the exchange
 * routed and passes it by.
 */
public final class UpstreamRoutingFilter extends NettyRoutingFilter {

	/**
	 * Just before the gateway's own routing filter.
	 */
	public static final int ORDER = Ordered.LOWEST_PRECEDENCE - 1;

	private final UpstreamClients clients;

	private final LiveSettings settings;

	/**
	 * Creates the filter.
	 * @param httpClient the gateway's shared client, for routes that are not gateway-lb
	 * services
	 * @param headersFilters the gateway's header filters
	 * @param properties the gateway's client properties
	 * @param clients the per-service clients
	 * @param settings the settings in force
	 */
	public UpstreamRoutingFilter(HttpClient httpClient, ObjectProvider<List<HttpHeadersFilter>> headersFilters,
			HttpClientProperties properties, UpstreamClients clients, LiveSettings settings) {
		super(httpClient, headersFilters, properties);
		this.clients = clients;
		this.settings = settings;
	}

	@Override
	protected HttpClient getHttpClient(Route route, ServerWebExchange exchange) {
		ExchangeLease lease = exchange.getAttribute(ExchangeLease.ATTRIBUTE);
		String service = (lease != null) ? lease.serviceId() : null;
		if (service == null) {
			return super.getHttpClient(route, exchange);
		}
		return this.clients.client(service, this.settings.get().forService(service).upstream());
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
