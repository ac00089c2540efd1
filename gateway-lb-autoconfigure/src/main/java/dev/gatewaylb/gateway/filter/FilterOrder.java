package dev.gatewaylb.gateway.filter;

import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.core.Ordered;

/**
 * Where gateway-lb's filters sit in Spring Cloud Gateway's chain, in one table. A request
 * meets them, and the gateway's own, in this order:
 * <table>
 * <caption>The chain of an {@code lb://} request</caption>
 * <tr>
 * <th>order</th>
 * <th>filter</th>
 * <th>why there</th>
 * </tr>
 * <tr>
 * <td>{@value #EXCHANGE}</td>
 * <td>{@link InFlightReleaseFilter}</td>
 * <td>outside the gateway's filter that writes the response body
 * ({@value #WRITE_RESPONSE}), so the exchange's end includes the body and a client that
 * goes away</td>
 * </tr>
 * <tr>
 * <td>-1</td>
 * <td>{@code NettyWriteResponseFilter}</td>
 * <td>(gateway) writes the body</td>
 * </tr>
 * <tr>
 * <td>10000</td>
 * <td>{@code RouteToRequestUrlFilter}</td>
 * <td>(gateway) makes the request URL {@code lb://service/path}</td>
 * </tr>
 * <tr>
 * <td>{@value #ATTEMPT}</td>
 * <td>{@link AttemptFilter}</td>
 * <td>after the URL exists, before the gateway's load-balancer filter, which then finds
 * it resolved and passes it</td>
 * </tr>
 * <tr>
 * <td>10150</td>
 * <td>{@code ReactiveLoadBalancerClientFilter}</td>
 * <td>(gateway) only for services gateway-lb does not balance</td>
 * </tr>
 * <tr>
 * <td>{@value #ROUTING}</td>
 * <td>{@link UpstreamRoutingFilter}</td>
 * <td>sends through the service's own client; before the gateway's WebSocket routing
 * filter ({@code LOWEST_PRECEDENCE - 1}) and its HTTP routing filter
 * ({@code LOWEST_PRECEDENCE}), and it leaves WebSocket upgrades to the first</td>
 * </tr>
 * </table>
 */
public final class FilterOrder {

	/**
	 * The gateway's filter that writes the response body.
	 */
	static final int WRITE_RESPONSE = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER;

	/**
	 * {@link InFlightReleaseFilter}: just outside the body writer.
	 */
	public static final int EXCHANGE = WRITE_RESPONSE - 1;

	/**
	 * {@link AttemptFilter}: just before the gateway's load-balancer filter.
	 */
	public static final int ATTEMPT = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER - 1;

	/**
	 * {@link UpstreamRoutingFilter}: just before the gateway's WebSocket routing filter,
	 * whose order is not a constant of its own.
	 */
	public static final int ROUTING = Ordered.LOWEST_PRECEDENCE - 2;

	private FilterOrder() {
	}

}
