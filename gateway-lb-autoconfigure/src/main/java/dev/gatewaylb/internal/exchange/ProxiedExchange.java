package dev.gatewaylb.internal.exchange;

import java.net.URI;

import dev.gatewaylb.internal.affinity.AffinitySession;
import dev.gatewaylb.internal.affinity.AffinityState;
import dev.gatewaylb.internal.feature.AnswerWatcher;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.hedging.core.Hedging;
import dev.gatewaylb.internal.loadreports.LoadReportsState;
import dev.gatewaylb.internal.mirror.Mirror;
import dev.gatewaylb.internal.mirror.MirrorSettings;
import dev.gatewaylb.internal.mirror.MirrorState;
import dev.gatewaylb.internal.observation.AttemptContext;
import dev.gatewaylb.internal.observation.AttemptObservations;
import dev.gatewaylb.internal.overload.Admission;
import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.internal.upstream.Outcome;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.support.NotFoundException;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The one owner of an {@code lb://} exchange: the class to read to follow a request
 * through gateway-lb. It only sequences; each step is a part handed what it needs, and no
 * part holds the owner:
 * <ol>
 * <li><b>Resolve</b>, once: a split chooses the target ({@link SplitRouting}, a
 * {@link SplitDecision}); the service's runtime is one map read (a service first named by
 * this request is waited for without blocking; one the application balances itself passes
 * on untouched). A copy of the request may go to a shadow ({@link Mirror}, sent by
 * {@link Shadows}).</li>
 * <li><b>Admit and pick</b> ({@link Picks}): the affinity cookie, then the algorithm,
 * avoiding the endpoints tried; the {@link Admission} may hold a pick back, or shed or
 * queue a request that finds every endpoint at its limit. The {@link Attempt} claims the
 * endpoint; the {@link ExchangeLease} holds the claim.</li>
 * <li><b>Send</b>: the request URL becomes the endpoint's, so that Spring Cloud Gateway's
 * load-balancer filter passes it by, and the routing filter sends it through the
 * service's own client, which reports to the attempt; a hedging service sends a round
 * through {@link HedgedRace}.</li>
 * <li><b>Decide</b> ({@link #decide}), the one place: the attempt is told what happened
 * and classifies it; then re-pick (a pool that closed under the request: free), retry
 * ({@link RetryPolicy}, within {@link Deadline} and the retry budget), or answer.</li>
 * <li><b>Answer</b> ({@link #answered}), once whatever the end: the affinity counted and
 * its cookie set, the answer's watcher given the status; the gateway's own answers are
 * {@link GatewayAnswer}'s.</li>
 * </ol>
 * Threads: an exchange runs one step at a time, each after the previous one in the
 * reactive chain, so the fields need no synchronization; a hedged round keeps to its own
 * state and hands back a value, and a wait for a place resumes on the exchange's event
 * loop.
 */
public final class ProxiedExchange {

	/**
	 * The exchange attribute holding the owner, so that a chain run again by a route's
	 * own {@code Retry} filter reaches the same one.
	 */
	public static final String ATTRIBUTE = ProxiedExchange.class.getName();

	/**
	 * Most re-picks one exchange makes when pools close under it, a bound that only a
	 * refresh storm could reach.
	 */
	static final int MAX_REPICKS = 4;

	private final ProxyServices services;

	private final ExchangeLease lease;

	/**
	 * The settings in force when the exchange arrived: every decision of the exchange
	 * reads this one generation.
	 */
	private final GatewayLbSettings settings;

	private final URI url;

	private final @Nullable SplitSettings split;

	private final Picks picks;

	private ServerWebExchange exchange;

	private GatewayFilterChain chain;

	private @Nullable ServiceRuntime runtime;

	/**
	 * What the split decided, or {@code null} for a request to a service: no allocation
	 * for the common exchange.
	 */
	private @Nullable SplitDecision decision;

	private AffinitySession affinity = AffinitySession.NONE;

	private Admission admission = Admission.NONE;

	private int retries;

	/**
	 * Whether the route has Spring Cloud Gateway's own {@code Retry} filter: its tries
	 * are then the route's, as on plain Spring Cloud Gateway, and the exchange makes none
	 * of its own (a re-pick after a closing pool, which sent nothing, still happens).
	 */
	private final boolean routeRetries;

	private int repicks;

	private long firstSentNanos;

	public ProxiedExchange(ProxyServices services, ExchangeLease lease, ServerWebExchange exchange,
			GatewayFilterChain chain, URI url, @Nullable String schemePrefix) {
		this.services = services;
		this.lease = lease;
		this.settings = services.settings().get();
		this.url = url;
		this.split = this.settings.splits().isEmpty() ? null : this.settings.split(url.getHost());
		this.exchange = exchange;
		this.chain = chain;
		AttemptObservations observations = services.observations();
		this.picks = new Picks(lease, exchange, url, schemePrefix, this.settings.trustedProxies(),
				(observations != null && observations.active()) ? observations : null);
		this.routeRetries = RetryPolicy.routeRetries(exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR));
	}

	/**
	 * Runs the exchange: resolve, then pick, send and decide until answered.
	 * @return completes when the chain after the attempt filter completed for the answer
	 */
	public Mono<Void> run() {
		SplitSettings split = this.split;
		String service = this.url.getHost();
		if (split != null) {
			SplitDecision decision = this.services.splits()
				.route(this.exchange, split, this.settings.trustedProxies(), this.picks::clientAddress);
			this.decision = decision;
			replace(decision.exchange());
			this.picks.decided(decision.hashKey(), decision.rollout() != null);
			service = decision.service();
			ObservedPicks observed = this.picks.observed();
			if (observed != null) {
				observed.split(service, this.services.splits().rolloutStep(split));
			}
		}
		String named = service;
		ServiceRuntime runtime = this.services.runtimes().find(named);
		// A service nobody knows is answered as one with no endpoint, and not tracked.
		return (runtime != null) ? start(runtime)
				: this.services.runtimes()
					.whenReady(named)
					.switchIfEmpty(Mono.error(() -> unknownService(named)))
					.flatMap(this::start);
	}

	/**
	 * Runs the exchange again, when a route's own {@code Retry} filter ran the chain
	 * again: same service, same split target, a fresh pick that avoids what this exchange
	 * tried; the previous attempt keeps whatever settled it.
	 * @param exchange the exchange as the route's filter hands it over
	 * @param chain the rest of the chain
	 * @return as {@link #run()}
	 */
	public Mono<Void> runAgain(ServerWebExchange exchange, GatewayFilterChain chain) {
		Attempt previous = this.lease.current();
		if (previous != null) {
			previous.cancel();
		}
		// The route's filter hands the exchange over as it had it: strip the override
		// header again.
		replace((this.split != null) ? SplitRouting.withoutOverride(exchange, this.split) : exchange);
		this.chain = chain;
		ServiceRuntime runtime = this.runtime;
		if (runtime == null) {
			// The chain runs again only after a first run that resolved the service.
			throw new IllegalStateException("the exchange has no service yet");
		}
		if (!runtime.isBalancedHere()) {
			return passOn(runtime);
		}
		this.retries++;
		this.picks.nextAttempt(AttemptContext.RETRY, "route-retry-filter");
		// The route's filter did not ask the budget; it spends it all the same, so that
		// gateway-lb's own retries stay within it.
		runtime.budget().retried(runtime.nanoTime());
		return next(runtime);
	}

	private Mono<Void> start(ServiceRuntime runtime) {
		this.runtime = runtime;
		if (!runtime.isBalancedHere()) {
			return passOn(runtime);
		}
		ServerWebExchangeUtils.addOriginalRequestUrl(this.exchange, this.url);
		this.affinity = AffinitySession.of(runtime.feature(AffinityState.class));
		this.admission = Admission.of(runtime.feature(OverloadState.class));
		mirror(runtime);
		return next(runtime);
	}

	/**
	 * Leaves a service gateway-lb does not balance to Spring Cloud Gateway's own
	 * load-balancer filter, which resolves the split's target.
	 */
	private Mono<Void> passOn(ServiceRuntime runtime) {
		if (this.split != null) {
			this.exchange.getAttributes()
				.put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR,
						UriComponentsBuilder.fromUri(this.url).host(runtime.id()).build(true).toUri());
		}
		return this.chain.filter(this.exchange);
	}

	/**
	 * Sends a copy of the request to the service's shadow, or to a rollout's target in
	 * its shadow stage (never the target to itself, as a request routed just as the stage
	 * ended would; the service's own mirror waits for the stage to end: one per request).
	 */
	private void mirror(ServiceRuntime runtime) {
		MirrorState state = runtime.feature(MirrorState.class);
		RolloutTrack stage = (this.decision != null) ? this.decision.shadowStage() : null;
		boolean staged = stage != null && !runtime.id().equalsIgnoreCase(stage.plan().target());
		MirrorSettings mirroring = staged
				? MirrorSettings.shadowStage(stage.plan().target(), state.settings().stripHeaders()) : state.settings();
		String target = mirroring.target();
		if (target == null) {
			return;
		}
		ServiceRuntime shadow = this.services.runtimes().find(target);
		ServerWebExchange exchange = this.exchange;
		ObservedPicks observed = this.picks.observed();
		Observation parent = (observed != null) ? observed.parent(exchange) : null;
		// The client as the split's sides tell clients apart: its share of the stage.
		int client = (this.decision != null) ? this.decision.rolloutClient() : 0;
		Mirror mirror = Mirror.start(state, mirroring, exchange.getRequest(), shadow != null && shadow.isBalancedHere(),
				() -> this.services.shadows().headers(exchange, mirroring.stripHeaders(), runtime.id()),
				(copy, body) -> this.services.shadows()
					.send(shadow, copy.method(), this.picks::endpointUrl, copy.headers(), copy.body(), body, parent),
				staged ? (differs) -> stage.shadowAnswered(client, differs) : null, runtime.clock());
		if (mirror != null) {
			this.lease.watch(mirror);
			ServerHttpRequest copying = mirror.copyBody(exchange.getRequest());
			if (copying != exchange.getRequest()) {
				replace(exchange.mutate().request(copying).build());
			}
		}
	}

	/**
	 * Sends the next attempt: one pick and one send, or a hedged round.
	 */
	private Mono<Void> next(ServiceRuntime runtime) {
		HedgeState hedges = runtime.feature(HedgeState.class);
		Hedging hedging = hedges.hedging();
		if (hedging != null && hedges.settings().hedges(this.exchange.getRequest())) {
			HedgedRace.Round.Of round = new HedgedRace.Round.Of(this.exchange, this.chain, this.lease, this.affinity,
					this.admission, this.firstSentNanos, this.retries == 0 && this.repicks == 0);
			// A hedged round does not wait for a place: its backup could not.
			return HedgedRace.run(this.picks, round, runtime, hedging)
				.onErrorResume(HedgedRace.NoPick.class::isInstance,
						(none) -> this.admission.shed() ? shed(runtime).then(Mono.<HedgedRace.Round>empty())
								: Mono.error(noEndpoint(runtime)))
				.flatMap((done) -> decide(done.attempt(), done.error()));
		}
		Attempt attempt = this.picks.pick(runtime, this.affinity, this.admission, this.firstSentNanos, null);
		if (attempt == null) {
			if (this.admission.shed()) {
				return this.admission.shedOrWait(this.exchange.getRequest(), this.picks.clientAddress(),
						runtime.clock(), () -> {
							// The pick after a wait follows the affinity cookie again:
							// the
							// endpoint
							// it names may be the one with a place now.
							this.affinity.again();
							this.picks.nextAttempt(null, "waited-for-place");
							return next(runtime);
						}, () -> shed(runtime));
			}
			return Mono.error(noEndpoint(runtime));
		}
		this.admission.picked();
		this.picks.route(this.exchange, attempt);
		return this.chain.filter(this.exchange)
			.then(Mono.defer(() -> decide(attempt, null)))
			.onErrorResume((error) -> decide(attempt, error));
	}

	/**
	 * Decides what follows an attempt, the one place that does: the headers arrived
	 * ({@code error} is {@code null}) or the attempt failed before them.
	 * @param attempt the attempt
	 * @param error what it failed with, or {@code null}
	 * @return the retry, the re-pick, the gateway's answer, or nothing more to do
	 */
	private Mono<Void> decide(Attempt attempt, @Nullable Throwable error) {
		ServiceRuntime runtime = attempt.runtime();
		ServerHttpResponse response = this.exchange.getResponse();
		if (this.firstSentNanos == 0) {
			// The start of the exchange's deadline.
			this.firstSentNanos = attempt.firstSentOfExchangeNanos();
		}
		if (error == null) {
			HttpStatusCode code = response.getStatusCode();
			if (code == null || attempt.phase() != Outcome.Phase.RECEIVING) {
				// The rest of the chain completed without an upstream answer (a WebSocket
				// session, a filter that answered itself): nothing to judge.
				answered(null, 0);
				return Mono.empty();
			}
			int status = code.value();
			// The endpoint's own load report, if the service reads them: out of the
			// headers before the client gets them.
			runtime.feature(LoadReportsState.class)
				.read(attempt.member().endpoint().address(), status, response.getHeaders(), !response.isCommitted());
			SplitDecision decision = this.decision;
			if (decision != null) {
				decision.answered(status, runtime.nanoTime() - attempt.startNanos(), attempt);
			}
			Outcome.Kind kind = attempt.answered(status);
			if (response.isCommitted() || !mayRetry(runtime, kind, status)) {
				answered(attempt, status);
				return Mono.empty();
			}
			return retry(attempt, runtime, kind, status);
		}
		Outcome.Kind kind = attempt.failed(error);
		if (kind.charge() == Outcome.Charge.FAILURE) {
			// What passive health charges the endpoint for (a connection failure, a
			// timeout); nothing for a client that left or an attempt the gateway gave up.
			rolloutFailed();
		}
		if (kind == Outcome.Kind.NOT_UPSTREAM) {
			answered(null, 0);
			return Mono.error(error);
		}
		if (kind == Outcome.Kind.SATURATED) {
			if (Outcome.isPoolClosing(error) && this.repicks < MAX_REPICKS) {
				// The pool closed as this request took it: its endpoint left discovery,
				// or a refresh replaced the service's pools. Nothing left the gateway:
				// pick again from the service as it is now, without spending a retry.
				this.repicks++;
				this.picks.nextAttempt(AttemptContext.RE_PICK, "pool-closing");
				// The pick follows the session's cookie again, as after a wait: its
				// endpoint is most likely in the new pools, healthy.
				this.affinity.again();
				ServiceRuntime current = this.services.runtimes().find(runtime.id());
				ServiceRuntime next = (current != null) ? current : runtime;
				if (next != runtime) {
					this.runtime = next;
					this.admission = Admission.of(next.feature(OverloadState.class));
				}
				ServerWebExchangeUtils.reset(this.exchange);
				return next(next);
			}
			runtime.counters().saturated().increment();
		}
		if (!response.isCommitted() && mayRetry(runtime, kind, 0)) {
			return retry(attempt, runtime, kind, 0);
		}
		if (kind == Outcome.Kind.SATURATED) {
			// The side's own pool was full: the client gets the gateway's 503, and a
			// canary too small for its step must not look healthy for it.
			rolloutFailed();
		}
		answered(null, 0);
		return GatewayAnswer.write(this.exchange, kind, runtime.id(), error);
	}

	private boolean mayRetry(ServiceRuntime runtime, Outcome.Kind kind, int status) {
		if (this.routeRetries) {
			// The route's Retry filter decides, by its own statuses and count.
			return false;
		}
		boolean replayable = !kind.mayHaveReached() || RetryPolicy.replayable(this.exchange.getRequest());
		if (!RetryPolicy.shouldRetry(kind, status, replayable, this.retries, runtime.settings().retry())) {
			return false;
		}
		long now = runtime.nanoTime();
		if (!Deadline.hasTimeLeft(runtime.settings().upstream().responseTimeout(), this.firstSentNanos, now)) {
			return false;
		}
		if (!runtime.budget().tryRetry(now)) {
			runtime.counters().refusedByBudget().increment();
			return false;
		}
		return true;
	}

	private Mono<Void> retry(Attempt attempt, ServiceRuntime runtime, Outcome.Kind kind, int status) {
		if (this.picks.observed() != null) {
			// The reason is made only for an observation.
			this.picks.nextAttempt(AttemptContext.RETRY, retryReason(attempt, kind, status));
		}
		attempt.cancel();
		this.retries++;
		runtime.counters().retried().increment();
		// Drop what the failed attempt left on the exchange: its connection, its headers.
		ServerWebExchangeUtils.reset(this.exchange);
		return next(runtime);
	}

	/**
	 * Returns why a retry skips the endpoint of the attempt before it, for the retry's
	 * observation: what that attempt got, and where.
	 */
	private static String retryReason(Attempt attempt, Outcome.Kind kind, int status) {
		String got = kind.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
		return ((status > 0) ? got + " " + status : got) + " at " + attempt.endpoint().address();
	}

	/**
	 * The exchange's answer is decided, the one place every end goes through once: the
	 * affinity is counted and its cookie set, and whoever watches the answer is given an
	 * upstream's status.
	 * @param attempt the attempt whose answer the client gets, or {@code null} when the
	 * gateway answers
	 * @param status its status
	 */
	private void answered(@Nullable Attempt attempt, int status) {
		if (this.affinity != AffinitySession.NONE) {
			ServerHttpRequest request = this.exchange.getRequest();
			boolean secure = SplitRouting.cameOverHttps(request, request.getRemoteAddress(),
					this.settings.trustedProxies());
			ServiceRuntime runtime = (attempt != null) ? attempt.runtime() : this.runtime;
			this.affinity.answered(this.exchange.getResponse(), this.picks.cookies(),
					(attempt != null) ? attempt.endpoint() : null, this.picks.lastTried(), secure,
					(runtime != null) ? runtime.clock().currentTimeMillis() : 0);
		}
		AnswerWatcher watcher = this.lease.watcher();
		if (attempt != null && watcher != null) {
			watcher.status(status);
		}
	}

	/**
	 * Returns what a service with no endpoint to pick answers, and counts it as an error
	 * of the rollout side the exchange is judged on: a canary with no endpoint is judged
	 * by what its share of the clients get.
	 */
	private NotFoundException noEndpoint(ServiceRuntime runtime) {
		runtime.counters().noEndpoint().increment();
		answered(null, 0);
		rolloutFailed();
		return unknownService(runtime.id());
	}

	/**
	 * Answers a request shed because every endpoint is at its concurrency limit: 503 with
	 * {@code Retry-After}, at once, charged to nobody and never retried (a retry would
	 * only add to the overload). A rollout counts it as an error of the side the request
	 * was split to: its client got a 503, and a release whose endpoints cannot keep up
	 * (their limits fall when they slow down) sheds more than the others.
	 */
	private Mono<Void> shed(ServiceRuntime runtime) {
		runtime.feature(OverloadState.class).shed().increment();
		this.picks.observeShed(runtime, "concurrency-limit");
		rolloutFailed();
		answered(null, 0);
		return GatewayAnswer.write(this.exchange, Outcome.Kind.SHED, runtime.id(), null);
	}

	/**
	 * Counts an error of the exchange on its rollout's side, if a rollout judges it.
	 */
	private void rolloutFailed() {
		SplitDecision decision = this.decision;
		if (decision != null) {
			decision.failed();
		}
	}

	/**
	 * Returns what Spring Cloud Gateway's own filter answers for a service without an
	 * instance: 503, or 404 with its {@code use404}.
	 */
	private NotFoundException unknownService(String service) {
		return NotFoundException.create(this.services.use404(), "Unable to find instance for " + service);
	}

	/**
	 * Makes the exchange's attempts go out with {@code exchange}, the same exchange
	 * decorated (without the split's override header, with a copy of its body taken).
	 */
	private void replace(ServerWebExchange exchange) {
		this.exchange = exchange;
		this.picks.exchange(exchange);
	}

}
