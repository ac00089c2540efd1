package dev.gatewaylb.internal.exchange;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

import dev.gatewaylb.internal.config.CookieSettings;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.request.Cidr;
import dev.gatewaylb.internal.request.Cookies;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.RolloutWindow;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.split.AffinityCookie;
import dev.gatewaylb.internal.split.Split;
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
 * will; {@code Set-Cookie} is sent only then, with {@code Secure} when the request came
 * over HTTPS (to the gateway, or to a trusted proxy that says so in
 * {@code X-Forwarded-Proto}). The value also becomes the consistent-hash key of the
 * chosen target, so a session pins one endpoint when the target balances with
 * {@code consistent-hash}.
 * <p>
 * The override header moves a request only when its client, as resolved through the
 * trusted proxies, is in the split's {@code override-trusted-clients}; whoever sent it,
 * the header is removed before the request is forwarded. Never throws on a malformed
 * request: an unreadable cookie is a missing one, an unknown target or an unreadable
 * address is no override.
 * <p>
 * A request a rollout judges names its client to the rollout's side: the affinity value
 * the request presented, on a sticky split, else the client's address through the trusted
 * proxies. A value the gateway minted for this very request is not an identity (a client
 * that never sends the cookie back would be a new client each time), so then the address
 * is.
 */
public final class SplitRouting {

	private final AffinityCookie affinity;

	private final SplitCounters counters;

	private final SplitRollouts rollouts;

	public SplitRouting(AffinityCookie affinity, SplitCounters counters, SplitRollouts rollouts) {
		this.affinity = affinity;
		this.counters = counters;
		this.rollouts = rollouts;
	}

	/**
	 * Returns the target service of an exchange, counts it, and leaves the affinity value
	 * as the exchange's hash key and the rollout side on the owner.
	 * @param owner the exchange's owner
	 * @param split the split its URL names
	 * @return the target's service id
	 */
	String route(ProxiedExchange owner, SplitSettings split) {
		ServerWebExchange exchange = owner.exchange();
		ServerHttpRequest request = exchange.getRequest();
		List<Cidr> trustedProxies = owner.settings().trustedProxies();
		CookieSettings sticky = split.sticky();
		String presented = (sticky != null) ? presentedAffinityValue(request, sticky) : null;
		String affinityValue = (presented != null) ? presented
				: (sticky != null) ? mintAffinityValue(exchange, sticky, trustedProxies) : null;
		// The step's layout index is one volatile read; the layouts themselves are
		// immutable and were built with the settings, so no lock and no build here. A
		// split without a rollout has one layout, the split itself.
		RolloutTrack rollout = this.rollouts.track(split.split().name(), split.rollout());
		Split choice = split.layout((rollout != null) ? rollout.layout() : 0);
		int target = overridden(request, split, owner);
		boolean chosen = target < 0;
		if (chosen) {
			target = choice.pick((affinityValue != null) ? affinityValue : request.getId());
		}
		if (rollout != null && chosen && rollout.shadowing()) {
			// The target gets none of the split's traffic (the layout gives it 0%) but a
			// mirror of it, which its shadow stage judges; a tester's override is not
			// the split's traffic.
			owner.shadowFor(rollout);
		}
		String service = choice.targets().get(target).service();
		this.counters.increment(choice.name(), service);
		if (affinityValue != null) {
			owner.pinHashKey(affinityValue);
		}
		if (rollout != null && chosen) {
			// An overridden request is a tester's, not the split's traffic: not judged.
			RolloutWindow window = rollout.window(target == split.rolloutTarget());
			if (window != null) {
				owner.judgeOn(window, (presented != null) ? presented.hashCode() : addressHash(owner.clientAddress()));
			}
		}
		return service;
	}

	/**
	 * Returns a hash of a client address, 0 when it is unknown: an IPv4 address's hash is
	 * its 32 bits, an IPv6 one's a hash of its 128; the rollout's side mixes it further.
	 */
	private static int addressHash(@Nullable InetAddress address) {
		return (address != null) ? address.hashCode() : 0;
	}

	/**
	 * Returns the exchange without the split's override header, so that no backend ever
	 * learns the header's name or acts on it: the exchange itself when the request does
	 * not carry it, the common case, which allocates nothing.
	 * @param exchange the exchange
	 * @param split the split its URL names
	 * @return the exchange to forward
	 */
	static ServerWebExchange withoutOverride(ServerWebExchange exchange, SplitSettings split) {
		String header = split.overrideHeader();
		if (header == null || !exchange.getRequest().getHeaders().containsHeader(header)) {
			return exchange;
		}
		return exchange.mutate().request((request) -> request.headers((headers) -> headers.remove(header))).build();
	}

	/**
	 * Returns the well-formed affinity value the request presents, or {@code null}.
	 */
	private static @Nullable String presentedAffinityValue(ServerHttpRequest request, CookieSettings sticky) {
		String presented = Cookies.first(request.getHeaders().get(HttpHeaders.COOKIE), sticky.name());
		return AffinityCookie.isValid(presented) ? presented : null;
	}

	/**
	 * Mints an affinity value for a request that presented none and sets the cookie.
	 */
	private String mintAffinityValue(ServerWebExchange exchange, CookieSettings sticky, List<Cidr> trustedProxies) {
		String value = this.affinity.mint();
		boolean secure = sticky.secure()
				|| cameOverHttps(exchange.getRequest(), exchange.getRequest().getRemoteAddress(), trustedProxies);
		exchange.getResponse().addCookie(sticky.toResponseCookie(value, secure));
		return value;
	}

	/**
	 * Returns whether the client reached the gateway over HTTPS: its own connection is
	 * TLS, or the request URL says {@code https} (Spring's forwarded-header support), or
	 * the connection's peer is a trusted proxy whose {@code X-Forwarded-Proto} starts
	 * with {@code https}. A client that is not a trusted proxy cannot make the gateway
	 * believe the header.
	 */
	static boolean cameOverHttps(ServerHttpRequest request, @Nullable InetSocketAddress peer,
			List<Cidr> trustedProxies) {
		if (request.getSslInfo() != null || "https".equalsIgnoreCase(request.getURI().getScheme())) {
			return true;
		}
		String proto = request.getHeaders().getFirst("X-Forwarded-Proto");
		if (proto == null || trustedProxies.isEmpty()) {
			return false;
		}
		InetAddress peerAddress = (peer != null) ? peer.getAddress() : null;
		if (peerAddress == null || !Cidr.anyContains(trustedProxies, peerAddress)) {
			return false;
		}
		// The first value is the one the client-facing proxy wrote.
		int comma = proto.indexOf(',');
		String first = ((comma < 0) ? proto : proto.substring(0, comma)).trim();
		return "https".equalsIgnoreCase(first);
	}

	/**
	 * Returns the index of the target the override header names, when its sender is
	 * trusted, or -1.
	 */
	private static int overridden(ServerHttpRequest request, SplitSettings split, ProxiedExchange owner) {
		String header = split.overrideHeader();
		if (header == null || split.overrideTrustedClients().isEmpty()) {
			return -1;
		}
		@Nullable String named = request.getHeaders().getFirst(header);
		if (named == null) {
			return -1;
		}
		int target = split.split().indexOf(named.trim());
		if (target < 0) {
			return -1;
		}
		InetAddress client = owner.clientAddress();
		return (client != null && split.trustsOverrideFrom(client)) ? target : -1;
	}

}
