package dev.gatewaylb.gateway.filter;

import dev.gatewaylb.gateway.runtime.SplitCounters;
import dev.gatewaylb.gateway.settings.SplitSettings;
import dev.gatewaylb.split.AffinityCookie;
import dev.gatewaylb.split.Cookies;
import dev.gatewaylb.split.Split;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * Chooses the target service of a request to a split, once per exchange.
 * <p>
 * The key of the weighted choice is the affinity cookie's value when the split is sticky,
 * else the request id. A sticky request without a well-formed value gets a new one, which
 * is also the key of this very request, so a session's first request lands where the rest
 * will; {@code Set-Cookie} is sent only then. The value also becomes the consistent-hash
 * key of the chosen target, so a session pins one endpoint when the target balances with
 * {@code consistent-hash}. Never throws on a malformed request: an unreadable cookie is a
 * missing one.
 */
final class SplitRouting {

	private final AffinityCookie affinity;

	private final SplitCounters counters;

	SplitRouting(AffinityCookie affinity, SplitCounters counters) {
		this.affinity = affinity;
		this.counters = counters;
	}

	/**
	 * Returns the target service of the exchange, counts it, and leaves the affinity
	 * value as the lease's hash key.
	 * @param exchange the exchange
	 * @param split the split its URL names
	 * @param lease the exchange's lease
	 * @return the target's service id
	 */
	String route(ServerWebExchange exchange, SplitSettings split, ExchangeLease lease) {
		ServerHttpRequest request = exchange.getRequest();
		String affinityValue = (split.sticky() != null) ? affinityValue(exchange, split.sticky()) : null;
		Split choice = split.split();
		int target = overridden(request, split);
		if (target < 0) {
			target = choice.pick((affinityValue != null) ? affinityValue : request.getId());
		}
		String service = choice.targets().get(target).service();
		this.counters.increment(choice.name(), service);
		if (affinityValue != null) {
			lease.hashKey(affinityValue);
		}
		return service;
	}

	/**
	 * Returns the request's well-formed affinity value, or mints one and sets the cookie.
	 */
	private String affinityValue(ServerWebExchange exchange, SplitSettings.StickyCookie sticky) {
		String presented = Cookies.first(exchange.getRequest().getHeaders().get(HttpHeaders.COOKIE), sticky.name());
		if (AffinityCookie.isValid(presented)) {
			return presented;
		}
		String value = this.affinity.mint();
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

}
