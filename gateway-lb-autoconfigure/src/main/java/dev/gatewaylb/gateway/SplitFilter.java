package dev.gatewaylb.gateway;

import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.SplitSettings;
import java.net.URI;

import dev.gatewaylb.split.AffinityCookie;
import dev.gatewaylb.split.Cookies;
import dev.gatewaylb.split.Split;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Sends a request for {@code lb://<split>} to one of the split's target services by
 * rewriting the URL to {@code lb://<target>} just before the gateway's load-balancer
 * filter resolves it. Every other {@code lb://} request passes untouched.
 * <p>
 * The key of the weighted choice is the affinity cookie's value when the split is sticky,
 * else the request id. A sticky request without a well-formed value gets a new one, which
 * is also the key of this very request, so a session's first request lands where the rest
 * will; {@code Set-Cookie} is sent only then. The value also becomes the consistent-hash
 * key of the chosen target, so a session pins one endpoint when the target balances with
 * {@code consistent-hash}. The chosen target is left in {@link #TARGET_ATTRIBUTE}.
 * <p>
 * Never throws on a malformed request: an unreadable cookie is a missing one.
 */
public final class SplitFilter implements GlobalFilter, Ordered {

	/**
	 * Before the retry and load-balancer filters, after the URL has become
	 * {@code lb://...}: a retry keeps the chosen target.
	 */
	public static final int ORDER = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER - 2;

	/**
	 * The exchange attribute holding the chosen target's service id.
	 */
	public static final String TARGET_ATTRIBUTE = SplitFilter.class.getName() + ".target";

	/**
	 * The exchange attribute holding the split's name.
	 */
	public static final String SPLIT_ATTRIBUTE = SplitFilter.class.getName() + ".split";

	/**
	 * Keeps a minted value across a retry of the same exchange, so it mints once.
	 */
	private static final String MINTED_ATTRIBUTE = SplitFilter.class.getName() + ".minted";

	private final LiveSettings settings;

	private final AffinityCookie affinity;

	private final SplitCounters counters;

	/**
	 * Creates the filter.
	 * @param settings the settings in force
	 * @param affinity mints affinity values
	 * @param counters counts each split's requests per target
	 */
	public SplitFilter(LiveSettings settings, AffinityCookie affinity, SplitCounters counters) {
		this.settings = settings;
		this.affinity = affinity;
		this.counters = counters;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
		if (url == null || url.getHost() == null || !isLoadBalanced(exchange, url)) {
			return chain.filter(exchange);
		}
		SplitSettings split = this.settings.get().split(url.getHost());
		if (split == null) {
			return chain.filter(exchange);
		}
		ServerHttpRequest request = exchange.getRequest();
		String affinityValue = (split.sticky() != null) ? affinityValue(exchange, split.sticky()) : null;
		Split choice = split.split();
		int target = overridden(request, split);
		if (target < 0) {
			target = choice.pick((affinityValue != null) ? affinityValue : request.getId());
		}
		String service = choice.targets().get(target).service();
		if (exchange.getAttributes().putIfAbsent(SPLIT_ATTRIBUTE, choice.name()) == null) {
			// Counted once per exchange, not once per retry.
			this.counters.increment(choice.name(), service);
		}
		if (affinityValue != null) {
			exchange.getAttributes().put(BalancerRegistry.HASH_KEY_ATTRIBUTE, affinityValue);
		}
		exchange.getAttributes().put(TARGET_ATTRIBUTE, service);
		URI rewritten = UriComponentsBuilder.fromUri(url).host(service).build(true).toUri();
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, rewritten);
		return chain.filter(exchange);
	}

	private static boolean isLoadBalanced(ServerWebExchange exchange, URI url) {
		return "lb".equalsIgnoreCase(url.getScheme())
				|| "lb".equals(exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR));
	}

	/**
	 * Returns the request's well-formed affinity value, or mints one and sets the cookie.
	 */
	private String affinityValue(ServerWebExchange exchange, SplitSettings.StickyCookie sticky) {
		String minted = exchange.getAttribute(MINTED_ATTRIBUTE);
		if (minted != null) {
			return minted;
		}
		String presented = Cookies.first(exchange.getRequest().getHeaders().get(HttpHeaders.COOKIE), sticky.name());
		if (AffinityCookie.isValid(presented)) {
			return presented;
		}
		String value = this.affinity.mint();
		exchange.getAttributes().put(MINTED_ATTRIBUTE, value);
		exchange.getResponse().addCookie(sticky.toResponseCookie(value));
		return value;
	}

	/**
	 * Returns the index of the target the override header names, or -1.
	 */
	private static int overridden(ServerHttpRequest request, SplitSettings split) {
		String header = split.overrideHeader();
		if (header == null) {
			return -1;
		}
		@Nullable String named = request.getHeaders().getFirst(header);
		return (named != null) ? split.split().indexOf(named.trim()) : -1;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
