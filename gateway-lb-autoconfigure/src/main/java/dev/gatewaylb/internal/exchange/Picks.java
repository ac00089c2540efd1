package dev.gatewaylb.internal.exchange;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.gatewaylb.internal.affinity.AffinitySession;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.hedging.core.Hedging;
import dev.gatewaylb.internal.observation.AttemptObservations;
import dev.gatewaylb.internal.overload.Admission;
import dev.gatewaylb.internal.request.ClientAddresses;
import dev.gatewaylb.internal.request.Cookies;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.request.Cidr;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.LoadBalancerUriTools;
import org.springframework.cloud.gateway.support.DelegatingServiceInstance;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * One exchange's picks: which endpoint each attempt goes to, and the claim on it. Picks
 * follow the session's affinity cookie first, then the service's algorithm with the
 * exchange's consistent-hash key; a retry avoids the endpoints the exchange tried while
 * others remain; the service's admission may hold a pick back or let it over a limit. It
 * keeps what a pick reads once per exchange (the hash key, the client's address) and the
 * endpoints tried, and points an attempt's exchange at its endpoint ({@link #route}).
 * <p>
 * Not thread-safe, and need not be: an exchange picks one step at a time. A hedged
 * round's backup is picked on the hedge timer's thread while the round waits
 * ({@link #pickBackup}); it only reads what the exchange wrote before the round started.
 */
final class Picks {

	private static final Object UNRESOLVED = new Object();

	private final ExchangeLease lease;

	private final URI url;

	private final @Nullable String schemePrefix;

	private final List<Cidr> trustedProxies;

	/**
	 * Whether a rollout judges the exchange's attempts, which then need the time they
	 * were sent.
	 */
	private boolean judged;

	/**
	 * The exchange whose request the picks read: the owner's, as it replaces it.
	 */
	private ServerWebExchange exchange;

	/**
	 * The consistent-hash key: {@link #UNRESOLVED} until first needed, then the key or
	 * {@code null} for none.
	 */
	private @Nullable Object hashKey = UNRESOLVED;

	private @Nullable Object clientAddress = UNRESOLVED;

	/**
	 * The address of the first endpoint tried, and of later ones (rare) in a list made
	 * only when needed: the common exchange allocates nothing for this.
	 */
	private @Nullable String firstTried;

	private @Nullable List<String> laterTried;

	/**
	 * What the observations of the exchange's attempts need, or {@code null} when nothing
	 * observes them: then nothing of it is made.
	 */
	private final @Nullable ObservedPicks observed;

	Picks(ExchangeLease lease, ServerWebExchange exchange, URI url, @Nullable String schemePrefix,
			List<Cidr> trustedProxies) {
		this(lease, exchange, url, schemePrefix, trustedProxies, null);
	}

	Picks(ExchangeLease lease, ServerWebExchange exchange, URI url, @Nullable String schemePrefix,
			List<Cidr> trustedProxies, @Nullable AttemptObservations observations) {
		this.lease = lease;
		this.exchange = exchange;
		this.url = url;
		this.schemePrefix = schemePrefix;
		this.trustedProxies = trustedProxies;
		this.observed = (observations != null) ? new ObservedPicks(observations) : null;
	}

	/**
	 * Returns what the observations of the exchange's attempts need, or {@code null} when
	 * nothing observes them.
	 */
	@Nullable ObservedPicks observed() {
		return this.observed;
	}

	/**
	 * Says what the next attempt is and why, for its observation; nothing when nothing
	 * observes attempts.
	 * @param kind one of the kinds of {@code AttemptContext}, or {@code null} to keep the
	 * kind
	 * @param reason why, or {@code null}
	 */
	void nextAttempt(@Nullable String kind, @Nullable String reason) {
		ObservedPicks observed = this.observed;
		if (observed != null) {
			observed.nextAttempt(kind, reason);
		}
	}

	/**
	 * Records a request shed before any attempt, when observed.
	 * @param runtime the service's runtime
	 * @param reason why
	 */
	void observeShed(ServiceRuntime runtime, String reason) {
		ObservedPicks observed = this.observed;
		if (observed != null) {
			observed.shed(runtime, this.exchange, reason);
		}
	}

	/**
	 * Takes what a split decided for the exchange's picks.
	 * @param hashKey the sticky value, which becomes the consistent-hash key (a session
	 * also pins one endpoint of its target), or {@code null}
	 * @param judged whether a rollout judges the exchange's attempts
	 */
	void decided(@Nullable String hashKey, boolean judged) {
		if (hashKey != null) {
			this.hashKey = hashKey;
		}
		this.judged = judged;
	}

	/**
	 * Makes the picks read the request of the exchange as the owner goes on with it.
	 * @param exchange the exchange
	 */
	void exchange(ServerWebExchange exchange) {
		this.exchange = exchange;
	}

	/**
	 * Picks the endpoint of the exchange's next attempt, claims it and hands the claim to
	 * the lease.
	 * @param runtime the service's runtime
	 * @param affinity the exchange's endpoint affinity, followed at its first pick
	 * @param admission the exchange's admission to the service's limits
	 * @param firstSentNanos when the exchange's first request was sent, 0 if not yet
	 * @param sendListener told when the attempt's request is sent (a hedged round's first
	 * attempt), or {@code null}
	 * @return the attempt, or {@code null} when the service has no endpoint to pick or
	 * the admission shed it ({@link Admission#shed()})
	 */
	@Nullable Attempt pick(ServiceRuntime runtime, AffinitySession affinity, Admission admission, long firstSentNanos,
			Attempt.@Nullable SendListener sendListener) {
		Snapshot<Member> snapshot = runtime.snapshot();
		CharSequence key = (snapshot.settings().algorithm() == Algorithm.CONSISTENT_HASH) ? hashKey(runtime) : null;
		int followed = affinity.follow(cookies(), snapshot);
		int index = followed;
		if (index < 0 && this.firstTried != null && snapshot.drawsLevels()) {
			// A retry over priority levels: another endpoint of the level of the one
			// tried
			// last, then of the next levels, not a fresh draw of a level.
			index = snapshot.selectAvoiding(this::tried, lastTried());
		}
		if (index < 0) {
			index = snapshot.select(key);
			if (index >= 0 && this.firstTried != null && tried(snapshot.endpoint(index).address())) {
				int untried = snapshot.selectAvoiding(this::tried, lastTried());
				index = (untried >= 0) ? untried : index;
			}
		}
		index = admission.admit(snapshot, index, key, admission.partitioned() ? partitionName(runtime) : null,
				sendListener != null);
		runtime.noteFailOpen(snapshot);
		if (index < 0) {
			return null;
		}
		// Followed only if the admission kept the endpoint the cookie named.
		Attempt attempt = claim(runtime, snapshot, index, firstSentNanos, sendListener, admission.partition(),
				followed >= 0 && index == followed, false);
		remember(attempt.endpoint().address());
		this.lease.hold(attempt);
		return attempt;
	}

	/**
	 * Picks and claims an endpoint for a backup of a hedged round's attempt: one this
	 * exchange has not tried, if the hedge budget has room. Not held by the lease (the
	 * race releases it, or makes it the lease's when it wins), not remembered as tried
	 * until the race is decided.
	 * @param runtime the service's runtime
	 * @param primary the attempt it backs up, whose send started the deadline
	 * @param hedging the service's hedging
	 * @param nowNanos the balancer clock's current time
	 * @return the attempt, or {@code null} when no other endpoint is there (a backup to
	 * the same one would only double its load) or the budget refused
	 */
	@Nullable Attempt pickBackup(ServiceRuntime runtime, Attempt primary, Hedging hedging, long nowNanos) {
		Snapshot<Member> snapshot = runtime.snapshot();
		int index = snapshot.selectAvoiding(this::tried, primary.member().endpoint().address());
		if (index < 0) {
			return null;
		}
		if (!hedging.tryBackup(nowNanos)) {
			runtime.feature(HedgeState.class).refusedByBudget().increment();
			return null;
		}
		return claim(runtime, snapshot, index, primary.firstSentOfExchangeNanos(), null, -1, false, true);
	}

	private Attempt claim(ServiceRuntime runtime, Snapshot<Member> snapshot, int index, long firstSentNanos,
			Attempt.@Nullable SendListener sendListener, int partition, boolean followed, boolean backup) {
		Attempt attempt = new Attempt(snapshot.claim(index), snapshot.ewmaDecayNanos(), runtime, snapshot.value(index),
				this.lease, this.judged, firstSentNanos, sendListener, partition, followed);
		ObservedPicks observed = this.observed;
		if (observed != null) {
			observed.claimed(runtime, this.exchange, attempt, backup);
		}
		return attempt;
	}

	/**
	 * Points an attempt's exchange at its endpoint: what Spring Cloud Gateway's
	 * load-balancer filter would have left there, and the attempt for the routing filter.
	 * @param exchange the exchange the attempt is sent with: the real one, or a hedged
	 * attempt's own
	 * @param attempt the attempt
	 */
	void route(ServerWebExchange exchange, Attempt attempt) {
		Member member = attempt.member();
		exchange.getAttributes().put(Attempt.ATTRIBUTE, attempt);
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, endpointUrl(member));
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR, member.response());
		ObservedPicks observed = this.observed;
		if (observed != null) {
			observed.routed(exchange, attempt);
		}
		if (this.schemePrefix != null) {
			// Resolved: the gateway's load-balancer filter must not resolve it again.
			exchange.getAttributes().remove(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR);
		}
	}

	/**
	 * Returns the request's URL with the endpoint's scheme, host and port: what Spring
	 * Cloud Gateway's load-balancer filter would make of it. The scheme is the endpoint's
	 * ({@code https} when it is secure), or the route's own after an {@code lb:} prefix
	 * ({@code lb:ws://}). The path and query are the request's, as that filter takes them
	 * ({@code LoadBalancerUriTools.reconstructURI} of the request's URI), not the
	 * {@code lb://} URL's: a route filter that sets that URL alone
	 * ({@code SetRequestUri}) chooses the service there, and the backend still gets the
	 * request's path.
	 * <p>
	 * Usually the {@code lb://} URL's path and query are the request's, as the
	 * route-to-request-URL filter rebuilt them, and the URL is made from them with one
	 * builder. When they differ (a filter set the URL, or the request's target is one
	 * that rebuilding changes: an empty {@code ?}, empty query parameters, {@code //}),
	 * Spring's own reconstruction makes it, so that a backend sees the same target with
	 * the starter as without it.
	 * @param member the endpoint
	 * @return the URL
	 */
	URI endpointUrl(Member member) {
		URI original = this.url;
		String scheme = (this.schemePrefix != null) ? original.getScheme() : (member.secure() ? "https" : "http");
		String path = original.getRawPath();
		String query = original.getRawQuery();
		URI requested = this.exchange.getRequest().getURI();
		if (!Objects.equals(path, requested.getRawPath()) || !Objects.equals(query, requested.getRawQuery())) {
			return LoadBalancerUriTools.reconstructURI(new DelegatingServiceInstance(member.instance(), scheme) {

				@Override
				public String getHost() {
					return member.host();
				}

				@Override
				public int getPort() {
					return member.port();
				}

			}, requested);
		}
		StringBuilder url = new StringBuilder(scheme.length() + 3 + member.endpoint().address().length()
				+ ((path != null) ? path.length() : 0) + ((query != null) ? query.length() + 1 : 0));
		url.append(scheme).append("://").append(member.endpoint().address());
		if (path != null) {
			url.append(path);
		}
		if (query != null) {
			url.append('?').append(query);
		}
		return URI.create(url.toString());
	}

	// The memos: read once per exchange, whatever asks.

	private @Nullable CharSequence hashKey(ServiceRuntime runtime) {
		Object key = this.hashKey;
		if (key == UNRESOLVED) {
			key = keyValue(runtime.settings().hashKey());
			this.hashKey = key;
		}
		return (CharSequence) key;
	}

	/**
	 * Returns the request's partition name of the service's limit
	 * ({@code concurrency.partition-by}), read where a hash key would be. A header or a
	 * cookie is taken only from a request whose connection's peer is a trusted proxy
	 * ({@code gateway.lb.trusted-proxies}); any other request is of no listed partition
	 * (the rest): a client that could name its partition could name the one with the
	 * largest share, and a partition under its share is admitted past the limits. The
	 * client's address ({@code client-ip}) is resolved through the trusted proxies
	 * already.
	 */
	private @Nullable CharSequence partitionName(ServiceRuntime runtime) {
		HashKey source = runtime.settings().concurrency().partitionBy();
		if (source == null || (source.source() != HashKey.Source.CLIENT_IP && !peerTrusted())) {
			return null;
		}
		return keyValue(source);
	}

	/**
	 * Returns whether the connection's peer is one of the trusted proxies.
	 */
	private boolean peerTrusted() {
		if (this.trustedProxies.isEmpty()) {
			return false;
		}
		InetSocketAddress peer = this.exchange.getRequest().getRemoteAddress();
		InetAddress address = (peer != null) ? peer.getAddress() : null;
		return address != null && Cidr.anyContains(this.trustedProxies, address);
	}

	/**
	 * Returns the value of a key source in the request: the client's address, a header or
	 * a cookie; {@code null} when missing or empty.
	 */
	private @Nullable String keyValue(HashKey source) {
		HttpHeaders headers = this.exchange.getRequest().getHeaders();
		String value = switch (source.source()) {
			case CLIENT_IP -> {
				InetAddress client = clientAddress();
				yield (client != null) ? client.getHostAddress() : null;
			}
			case HEADER -> headers.getFirst(source.name());
			case COOKIE -> Cookies.first(headers.get(HttpHeaders.COOKIE), source.name());
		};
		return (value == null || value.isEmpty()) ? null : value;
	}

	/**
	 * Returns the request's {@code Cookie} lines.
	 * @return the lines, or {@code null}
	 */
	@Nullable List<String> cookies() {
		return this.exchange.getRequest().getHeaders().get(HttpHeaders.COOKIE);
	}

	/**
	 * Returns the client's address as resolved through the trusted proxies
	 * ({@link ClientAddresses}), once per exchange.
	 * @return the address, or {@code null} when the peer is unknown
	 */
	@Nullable InetAddress clientAddress() {
		Object address = this.clientAddress;
		if (address == UNRESOLVED) {
			ServerHttpRequest request = this.exchange.getRequest();
			address = ClientAddresses.resolveAddress(request.getRemoteAddress(),
					request.getHeaders().get("X-Forwarded-For"), this.trustedProxies);
			this.clientAddress = address;
		}
		return (InetAddress) address;
	}

	// The endpoints tried.

	/**
	 * Notes that a backup of the current attempt went to {@code address}: later attempts
	 * avoid it too, but a backup is not a retry. Called by the race's decider, which goes
	 * on with the exchange.
	 * @param address {@code host:port}
	 */
	void triedAlso(String address) {
		remember(address);
	}

	private void remember(String address) {
		if (this.firstTried == null) {
			this.firstTried = address;
		}
		else {
			List<String> later = this.laterTried;
			if (later == null) {
				later = new ArrayList<>(2);
				this.laterTried = later;
			}
			later.add(address);
		}
	}

	/**
	 * Returns the address of the endpoint this exchange tried last.
	 * @return the address, or {@code null}
	 */
	@Nullable String lastTried() {
		List<String> later = this.laterTried;
		return (later != null && !later.isEmpty()) ? later.get(later.size() - 1) : this.firstTried;
	}

	/**
	 * Returns whether an attempt of this exchange went to {@code address}.
	 * @param address {@code host:port}
	 * @return whether tried
	 */
	boolean tried(String address) {
		List<String> later = this.laterTried;
		return address.equals(this.firstTried) || (later != null && later.contains(address));
	}

}
