package dev.gatewaylb.internal.exchange;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.Supplier;

import dev.gatewaylb.internal.config.CookieSettings;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.request.Cidr;
import dev.gatewaylb.internal.request.Cookies;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.RolloutWindow;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.split.StickyCookie;
import dev.gatewaylb.internal.split.Split;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * Chooses the target service of a request to a split, once per exchange.
 * <p>
 * The key of the weighted choice is the sticky cookie's value when the split is sticky,
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
 * A request a rollout judges names its client to the rollout's side by its address
 * through the trusted proxies, an IPv6 address by its /64 (what one host, or one home, is
 * given): never by its sticky value, which is unsigned, so that a client minting a new
 * one per request would count as a new client each time and outvote everyone. Clients
 * behind one address (a NAT) count as one, which only makes the judge more cautious.
 */
public final class SplitRouting {

	private final StickyCookie sticky;

	private final SplitCounters counters;

	private final SplitRollouts rollouts;

	public SplitRouting(StickyCookie sticky, SplitCounters counters, SplitRollouts rollouts) {
		this.sticky = sticky;
		this.counters = counters;
		this.rollouts = rollouts;
	}

	/**
	 * Chooses the target service of an exchange and counts it.
	 * @param exchange the exchange
	 * @param split the split its URL names
	 * @param trustedProxies the networks whose forwarded headers are believed
	 * @param client the client's address through the trusted proxies, asked only when
	 * needed
	 * @return the decision
	 */
	SplitDecision route(ServerWebExchange exchange, SplitSettings split, List<Cidr> trustedProxies,
			Supplier<@Nullable InetAddress> client) {
		ServerHttpRequest request = exchange.getRequest();
		CookieSettings sticky = split.sticky();
		String presented = (sticky != null) ? presentedStickyValue(request, sticky) : null;
		String stickyValue = (presented != null) ? presented
				: (sticky != null) ? mintStickyValue(exchange, sticky, trustedProxies) : null;
		// The step's layout index is one volatile read; the layouts themselves are
		// immutable and were built with the settings, so no lock and no build here. A
		// split without a rollout has one layout, the split itself.
		RolloutTrack rollout = this.rollouts.track(split.split().name(), split.rollout());
		Split choice = split.layout((rollout != null) ? rollout.layout() : 0);
		int target = overridden(request, split, client);
		boolean chosen = target < 0;
		if (chosen) {
			target = choice.pick((stickyValue != null) ? stickyValue : request.getId());
		}
		String service = choice.targets().get(target).service();
		this.counters.increment(choice.name(), service);
		RolloutWindow window = null;
		int rolloutClient = 0;
		RolloutTrack shadowStage = null;
		if (rollout != null && chosen) {
			// An overridden request is a tester's, not the split's traffic: not judged,
			// and
			// not copied to a shadow stage.
			if (rollout.shadowing()) {
				// The target gets none of the split's traffic (the layout gives it 0%)
				// but
				// a copy of it, which its shadow stage judges.
				shadowStage = rollout;
			}
			window = rollout.window(target == split.rolloutTarget());
			if (window != null || shadowStage != null) {
				rolloutClient = addressHash(client.get());
			}
		}
		return new SplitDecision(service, withoutOverride(exchange, split), stickyValue, window, rolloutClient,
				shadowStage);
	}

	/**
	 * Returns the id and step of a split's rollout in force, {@code id/step}, for an
	 * observation; {@code null} when it has none.
	 * @param split the split's settings
	 * @return the rollout, or {@code null}
	 */
	@Nullable String rolloutStep(SplitSettings split) {
		RolloutTrack rollout = this.rollouts.track(split.split().name(), split.rollout());
		return (rollout != null) ? rollout.plan().id() + "/" + rollout.status().step() : null;
	}

	/**
	 * Returns a hash of a client address, 0 when it is unknown: an IPv4 address's hash is
	 * its 32 bits, an IPv6 one's a hash of its first 64 (its /64: a host may take any
	 * address of its prefix); the rollout's side mixes it further.
	 */
	static int addressHash(@Nullable InetAddress address) {
		if (address instanceof Inet6Address) {
			byte[] bytes = address.getAddress();
			int hash = 1;
			for (int i = 0; i < 8; i++) {
				hash = 31 * hash + bytes[i];
			}
			return hash;
		}
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
	 * Returns the well-formed sticky value the request presents, or {@code null}.
	 */
	private static @Nullable String presentedStickyValue(ServerHttpRequest request, CookieSettings sticky) {
		String presented = Cookies.first(request.getHeaders().get(HttpHeaders.COOKIE), sticky.name());
		return StickyCookie.isValid(presented) ? presented : null;
	}

	/**
	 * Mints a sticky value for a request that presented none and sets the cookie.
	 */
	private String mintStickyValue(ServerWebExchange exchange, CookieSettings sticky, List<Cidr> trustedProxies) {
		String value = this.sticky.mint();
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
	private static int overridden(ServerHttpRequest request, SplitSettings split,
			Supplier<@Nullable InetAddress> client) {
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
		InetAddress address = client.get();
		return (address != null && split.trustsOverrideFrom(address)) ? target : -1;
	}

}
