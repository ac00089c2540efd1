package dev.gatewaylb.gateway.filter;

import java.net.URI;
import java.nio.charset.StandardCharsets;

import dev.gatewaylb.balance.Algorithm;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.runtime.ServiceRuntimes;
import dev.gatewaylb.gateway.runtime.SplitCounters;
import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import dev.gatewaylb.gateway.settings.HashKey;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.settings.SplitSettings;
import dev.gatewaylb.gateway.upstream.Outcome;
import dev.gatewaylb.hedge.Hedging;
import dev.gatewaylb.rollout.SplitRollouts;
import dev.gatewaylb.split.AffinityCookie;
import dev.gatewaylb.split.Cookies;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.support.NotFoundException;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Owns every attempt of an {@code lb://} request, from the split to the outcome: one
 * class to read to follow a request through gateway-lb.
 * <ol>
 * <li><b>Resolve</b>, once per exchange: the split the URL names, if any, chooses the
 * target service ({@link SplitRouting}); the service's {@link ServiceRuntime} is one map
 * read. A service whose runtime is not built yet (first named by this request) is waited
 * for without blocking. A service the application balances with its own Spring Cloud
 * LoadBalancer bean passes on to Spring Cloud Gateway untouched.</li>
 * <li><b>Pick</b>: the runtime's snapshot selects an endpoint, avoiding those this
 * exchange tried while others remain. The {@link Attempt} claims it in flight and is put
 * in the exchange's {@link ExchangeLease}.</li>
 * <li><b>Send</b>: the request URL becomes the endpoint's, so the gateway's load-balancer
 * filter passes it by, and {@link UpstreamRoutingFilter} sends it through the service's
 * own client, which reports the attempt's progress to it.</li>
 * <li><b>Classify</b>: when the headers arrived, a failure status charges the endpoint;
 * an error is classified by {@link Outcome#classify} from how far the attempt got. The
 * body's outcome is settled later by the upstream connection itself.</li>
 * <li><b>Retry</b> or answer: {@link RetryPolicy} decides, within what is left of
 * {@code timeouts.response} and the service's retry budget; otherwise a failure the
 * gateway answers itself (502, 503, 504) is written as a small JSON body.</li>
 * </ol>
 * Ordered just before Spring Cloud Gateway's load-balancer filter ({@link FilterOrder}).
 */
public final class AttemptFilter implements GlobalFilter, Ordered {

	/**
	 * Most picks one exchange makes when pools close under it, a bound that only a
	 * refresh storm could reach.
	 */
	static final int MAX_REPICKS = 4;

	private final LiveSettings settings;

	private final ServiceRuntimes runtimes;

	private final SplitRouting splits;

	private final boolean use404;

	/**
	 * Creates the filter.
	 * @param settings the settings in force
	 * @param runtimes every service's runtime
	 * @param affinity mints affinity cookie values
	 * @param splitCounters counts each split's requests per target
	 * @param rollouts the splits' rollouts
	 * @param use404 whether a service without an endpoint to pick answers 404 instead of
	 * 503, as Spring Cloud Gateway's own
	 * {@code spring.cloud.gateway.server.webflux.loadbalancer.use404} says
	 */
	public AttemptFilter(LiveSettings settings, ServiceRuntimes runtimes, AffinityCookie affinity,
			SplitCounters splitCounters, SplitRollouts rollouts, boolean use404) {
		this.settings = settings;
		this.runtimes = runtimes;
		this.splits = new SplitRouting(affinity, splitCounters, rollouts);
		this.use404 = use404;
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
		ServiceRuntime resolved = lease.runtime();
		if (resolved != null) {
			// The chain runs again (a route's own Retry filter): same service, same
			// split target, a fresh pick that avoids what this exchange tried. The
			// previous attempt keeps whatever settled it.
			Attempt previous = lease.attempt();
			if (previous != null) {
				previous.abandon();
			}
			// The route's filter hands the exchange as it had it: strip the override
			// header again.
			SplitSettings split = this.settings.get().split(url.getHost());
			if (split != null) {
				exchange = SplitRouting.withoutOverride(exchange, split);
			}
			lease.route(exchange, chain, url, schemePrefix, this);
			return attempt(lease, resolved);
		}
		String service = url.getHost();
		GatewayLbSettings current = this.settings.get();
		SplitSettings split = current.splits().isEmpty() ? null : current.split(service);
		if (split != null) {
			service = this.splits.route(exchange, split, lease, current.trustedProxies());
			exchange = SplitRouting.withoutOverride(exchange, split);
		}
		lease.route(exchange, chain, url, schemePrefix, this);
		ServiceRuntime runtime = this.runtimes.find(service);
		if (runtime == null) {
			return this.runtimes.whenReady(service).flatMap((ready) -> start(lease, ready, split != null));
		}
		return start(lease, runtime, split != null);
	}

	private Mono<Void> start(ExchangeLease lease, ServiceRuntime runtime, boolean split) {
		ServerWebExchange exchange = lease.exchange();
		if (!runtime.isBalancedHere()) {
			if (split) {
				// The gateway's own load-balancer filter resolves the target.
				URI url = lease.url();
				exchange.getAttributes()
					.put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR,
							UriComponentsBuilder.fromUri(url).host(runtime.id()).build(true).toUri());
			}
			return lease.chain().filter(exchange);
		}
		lease.resolved(runtime);
		ServerWebExchangeUtils.addOriginalRequestUrl(exchange, lease.url());
		return attempt(lease, runtime);
	}

	/**
	 * Picks an endpoint and sends the request to it; with a backup to another endpoint if
	 * the service hedges, the request may be sent twice, and the answer is slow
	 * ({@link HedgedAttempts}).
	 */
	private Mono<Void> attempt(ExchangeLease lease, ServiceRuntime runtime) {
		Hedging hedging = runtime.hedging();
		if (hedging != null && hedges(lease.exchange().getRequest())) {
			lease.hedged();
			return HedgedAttempts.race(this, lease, runtime, hedging);
		}
		Attempt attempt = pick(lease, runtime);
		if (attempt == null) {
			return Mono.error(noEndpoint(runtime));
		}
		ServerWebExchange exchange = lease.exchange();
		route(exchange, lease, attempt.member());
		return lease.chain()
			.filter(exchange)
			.contextWrite(attempt.context())
			.then(Mono.defer(attempt))
			.onErrorResume(attempt);
	}

	/**
	 * Returns whether a request may get a backup: one that may be sent twice (the retry
	 * rule: an idempotent method, no body), and not a WebSocket upgrade.
	 */
	private static boolean hedges(ServerHttpRequest request) {
		return RetryPolicy.replayable(request) && !"websocket".equalsIgnoreCase(request.getHeaders().getUpgrade());
	}

	/**
	 * Picks the endpoint of the exchange's next attempt, claims it and makes it the
	 * lease's current attempt. A retry goes to an endpoint this exchange has not tried,
	 * while one remains.
	 * @return the attempt, or {@code null} when the service has no endpoint to pick
	 */
	@Nullable Attempt pick(ExchangeLease lease, ServiceRuntime runtime) {
		Snapshot<Member> snapshot = runtime.snapshot();
		CharSequence key = (snapshot.settings().algorithm() == Algorithm.CONSISTENT_HASH) ? hashKey(lease, runtime)
				: null;
		int index = snapshot.select(key);
		if (index >= 0 && lease.attempts() > 0 && lease.tried(snapshot.endpoint(index).address())) {
			int untried = snapshot.selectAvoiding(lease::tried);
			index = (untried >= 0) ? untried : index;
		}
		runtime.noteFailOpen(snapshot);
		if (index < 0) {
			return null;
		}
		Attempt attempt = claim(lease, runtime, snapshot, index);
		lease.hold(attempt);
		return attempt;
	}

	/**
	 * Claims an endpoint of a snapshot for an attempt of the exchange.
	 */
	static Attempt claim(ExchangeLease lease, ServiceRuntime runtime, Snapshot<Member> snapshot, int index) {
		return new Attempt(snapshot.claim(index), snapshot.ewmaDecayNanos(), lease, runtime, snapshot.value(index));
	}

	/**
	 * Returns what a service with no endpoint to pick answers.
	 */
	NotFoundException noEndpoint(ServiceRuntime runtime) {
		return NotFoundException.create(this.use404, "Unable to find instance for " + runtime.id());
	}

	/**
	 * Points an attempt's exchange at its endpoint: what Spring Cloud Gateway's
	 * load-balancer filter would have left there.
	 */
	void route(ServerWebExchange exchange, ExchangeLease lease, Member member) {
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, endpointUrl(exchange, member, lease));
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR, member.response());
		if (lease.schemePrefix() != null) {
			// Resolved: the gateway's load-balancer filter must not resolve it again.
			exchange.getAttributes().remove(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR);
		}
	}

	/**
	 * The headers arrived (or the rest of the chain completed without routing): charge a
	 * failure status, and retry it if the policy allows.
	 */
	Mono<Void> afterHeaders(Attempt attempt) {
		ExchangeLease lease = attempt.lease();
		ServerHttpResponse response = lease.exchange().getResponse();
		HttpStatusCode code = response.getStatusCode();
		if (code == null || attempt.phase() != Outcome.Phase.RECEIVING) {
			return Mono.empty();
		}
		int status = code.value();
		Outcome.Kind kind = Outcome.ofStatus(status, attempt.countsAsFailure(status));
		if (kind == Outcome.Kind.SERVER_ERROR) {
			attempt.settle(kind);
		}
		if (!response.isCommitted() && mayRetry(attempt, kind, status)) {
			return retry(attempt);
		}
		return Mono.empty();
	}

	/**
	 * The attempt failed before its headers: classify, charge, and retry or answer.
	 */
	Mono<Void> afterError(Attempt attempt, Throwable error) {
		Outcome.Kind kind = Outcome.classify(attempt.phase(), error);
		attempt.settle(kind);
		if (kind == Outcome.Kind.NOT_UPSTREAM) {
			return Mono.error(error);
		}
		ExchangeLease lease = attempt.lease();
		ServiceRuntime runtime = attempt.runtime();
		if (kind == Outcome.Kind.SATURATED) {
			if (Outcome.isPoolClosing(error) && lease.attempts() <= MAX_REPICKS) {
				// The pool closed as this request took it: its endpoint left discovery,
				// or
				// a refresh replaced the service's pools. Nothing left the gateway; pick
				// again from the service as it is now, without spending a retry.
				ServiceRuntime current = this.runtimes.find(runtime.id());
				ServiceRuntime next = (current != null) ? current : runtime;
				lease.resolved(next);
				ServerWebExchangeUtils.reset(lease.exchange());
				return attempt(lease, next);
			}
			runtime.counters().saturated().increment();
		}
		if (!lease.exchange().getResponse().isCommitted() && mayRetry(attempt, kind, 0)) {
			return retry(attempt);
		}
		return answer(lease.exchange(), kind, runtime.id(), error);
	}

	private boolean mayRetry(Attempt attempt, Outcome.Kind kind, int status) {
		ExchangeLease lease = attempt.lease();
		ServiceRuntime runtime = attempt.runtime();
		boolean replayable = !kind.mayHaveReached() || RetryPolicy.replayable(lease.exchange().getRequest());
		if (!RetryPolicy.shouldRetry(kind, status, replayable, lease.attempts() - 1, runtime.settings().retry())) {
			return false;
		}
		long now = this.runtimes.nanoTime();
		if (!lease.hasTimeLeft(runtime, now)) {
			return false;
		}
		if (!runtime.budget().tryRetry(now)) {
			runtime.counters().refusedByBudget().increment();
			return false;
		}
		return true;
	}

	private Mono<Void> retry(Attempt attempt) {
		attempt.abandon();
		ExchangeLease lease = attempt.lease();
		ServiceRuntime runtime = attempt.runtime();
		runtime.counters().retried().increment();
		// Drop what the failed attempt left on the exchange: its connection, its headers.
		ServerWebExchangeUtils.reset(lease.exchange());
		return attempt(lease, runtime);
	}

	private @Nullable CharSequence hashKey(ExchangeLease lease, ServiceRuntime runtime) {
		if (lease.hashKeyResolved()) {
			return lease.hashKey();
		}
		HashKey source = runtime.settings().hashKey();
		HttpHeaders headers = lease.exchange().getRequest().getHeaders();
		String key = switch (source.source()) {
			case CLIENT_IP -> ClientAddresses.resolve(lease.remoteAddress(), headers.get("X-Forwarded-For"),
					this.settings.get().trustedProxies());
			case HEADER -> headers.getFirst(source.name());
			case COOKIE -> Cookies.first(headers.get(HttpHeaders.COOKIE), source.name());
		};
		CharSequence resolved = (key == null || key.isEmpty()) ? null : key;
		lease.hashKey(resolved);
		return resolved;
	}

	/**
	 * Returns the request's URL with the endpoint's scheme, host and port: what Spring
	 * Cloud Gateway's load-balancer filter would make of it. The scheme is the endpoint's
	 * ({@code https} when it is secure), or the route's own after an {@code lb:} prefix
	 * ({@code lb:ws://}).
	 */
	private static URI endpointUrl(ServerWebExchange exchange, Member member, ExchangeLease lease) {
		URI original = exchange.getRequest().getURI();
		String scheme = (lease.schemePrefix() != null) ? lease.url().getScheme() : (member.secure() ? "https" : "http");
		String path = original.getRawPath();
		String query = original.getRawQuery();
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

	/**
	 * Writes a failure the gateway answers itself as a small JSON body, unless the
	 * response is already on its way.
	 */
	private static Mono<Void> answer(ServerWebExchange exchange, Outcome.Kind kind, String service, Throwable error) {
		HttpStatus status = kind.status();
		ServerHttpResponse response = exchange.getResponse();
		if (status == null || response.isCommitted()) {
			return Mono.error(error);
		}
		ServerWebExchangeUtils.reset(exchange);
		response.setStatusCode(status);
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		if (kind == Outcome.Kind.REQUEST_BODY_IDLE) {
			// The rest of the body may still be on its way, and a client this slow
			// should not keep the connection: close it, as RFC 9110 says of a 408.
			response.getHeaders().set(HttpHeaders.CONNECTION, "close");
		}
		String body = "{\"status\":" + status.value() + ",\"error\":\"" + kind.error() + "\",\"service\":\""
				+ service.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
	}

}
