package dev.gatewaylb.internal.exchange;

import java.net.InetAddress;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.gatewaylb.internal.config.CookieSettings;
import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.affinity.AffinityState;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.mirror.MirrorState;
import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.RolloutWindow;
import dev.gatewaylb.internal.affinity.AffinityOutcome;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.affinity.AffinitySettings;
import dev.gatewaylb.internal.mirror.MirrorSettings;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.request.ClientAddresses;
import dev.gatewaylb.internal.request.Cookies;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.request.SetCookies;
import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.internal.upstream.Outcome;
import dev.gatewaylb.internal.hedging.core.Hedging;
import dev.gatewaylb.internal.overload.core.Partitions;
import dev.gatewaylb.gateway.filter.AttemptFilter;
import dev.gatewaylb.gateway.filter.UpstreamRoutingFilter;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.support.NotFoundException;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The one owner of an {@code lb://} exchange's attempts: the class to read to follow a
 * request through gateway-lb. {@link AttemptFilter} makes one per exchange and subscribes
 * to {@link #run()}:
 * <ol>
 * <li><b>Resolve</b>, once: the split the URL names, if any, chooses the target service
 * ({@link SplitRouting}); the service's runtime is one map read (a service first named by
 * this request is waited for without blocking). A service the application balances with
 * its own Spring Cloud LoadBalancer bean passes on to Spring Cloud Gateway
 * untouched.</li>
 * <li><b>Pick</b> ({@link #pick}): the runtime's snapshot selects an endpoint, avoiding
 * those this exchange tried while others remain; the new {@link Attempt} claims it in
 * flight and the exchange's {@link ExchangeLease} holds the claim.</li>
 * <li><b>Send</b>: the request URL becomes the endpoint's, so Spring Cloud Gateway's
 * load-balancer filter passes it by, and {@link UpstreamRoutingFilter} sends it through
 * the service's own client, which reports the attempt's progress to the attempt. A
 * service that hedges sends through {@link HedgedRace} instead: the attempt and perhaps a
 * backup, the first headers winning.</li>
 * <li><b>Decide</b> ({@link #decide}), the one place: when the headers arrived, a failure
 * status charges the endpoint; an error is classified by {@link Outcome#classify} from
 * how far the attempt got and ends it. Then re-pick (a pool that closed under the
 * request: free), retry ({@link RetryPolicy}, within {@link Deadline} and the service's
 * retry budget), or answer (502, 503, 504 as a small JSON body, or the upstream's own
 * answer).</li>
 * </ol>
 * The body's outcome is settled later by the upstream connection itself, on the attempt.
 * <p>
 * Threads: an exchange runs one step at a time, each after the previous one in the
 * reactive chain, so the fields here need no synchronization; the only step that runs
 * while another thread could act is a hedged round, whose race keeps to its own state and
 * hands its result back here ({@link HedgedRace}).
 * <p>
 * Longer than most classes here on purpose: the loop above (resolve, pick, send, decide,
 * re-pick, retry, answer) and the per-exchange memos it reads are kept in one class so
 * that a reader follows a request in one place, as docs/request-path.md draws it. What
 * does not need the exchange's state lives beside it: the deadline ({@link Deadline}),
 * the retry rule ({@link RetryPolicy}), the gateway's own answers
 * ({@link GatewayAnswer}).
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

	private static final Object UNRESOLVED = new Object();

	private final ProxyServices services;

	private final ExchangeLease lease;

	/**
	 * The settings in force when the exchange arrived: every decision of the exchange
	 * reads this one generation.
	 */
	private final GatewayLbSettings settings;

	private final URI url;

	private final @Nullable String schemePrefix;

	private final @Nullable SplitSettings split;

	private ServerWebExchange exchange;

	private GatewayFilterChain chain;

	private @Nullable ServiceRuntime runtime;

	private @Nullable RolloutWindow rollout;

	/**
	 * The hash of the client's identity on the rollout's side, when {@link #rollout} is
	 * set.
	 */
	private int rolloutClient;

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

	private int retries;

	private int repicks;

	/**
	 * Whether the last pick found every endpoint at its concurrency limit.
	 */
	private boolean shed;

	/**
	 * The partition of the request the last pick shed, -1 for a service not partitioned.
	 */
	private int shedPartition = -1;

	/**
	 * When a request waiting for a place (concurrency.max-wait) is shed; set at its first
	 * wait, so that waits after a lost race share one deadline.
	 */
	private long waitDeadlineNanos;

	private boolean waited;

	/**
	 * What became of the request's endpoint affinity: decided at the first pick,
	 * {@code null} until then and for a service without affinity.
	 */
	private @Nullable AffinityOutcome affinity;

	/**
	 * The endpoint the request's affinity cookie led the first pick to, if it did.
	 */
	private @Nullable EndpointState followed;

	/**
	 * Whether the request's cookie was signed with a previous secret: its answer gets one
	 * signed with the current secret, so that sessions leave the old secret as they go.
	 */
	private boolean previousSecret;

	private boolean affinityCounted;

	/**
	 * The exchange's mirror to a shadow service, or {@code null} when it is not mirrored.
	 */
	private @Nullable Mirror mirror;

	/**
	 * The rollout whose shadow stage the exchange is mirrored for, or {@code null}.
	 */
	private @Nullable RolloutTrack shadowStage;

	private long firstSentNanos;

	public ProxiedExchange(ProxyServices services, ExchangeLease lease, ServerWebExchange exchange,
			GatewayFilterChain chain, URI url, @Nullable String schemePrefix) {
		this.services = services;
		this.lease = lease;
		this.settings = services.settings().get();
		this.url = url;
		this.schemePrefix = schemePrefix;
		this.split = this.settings.splits().isEmpty() ? null : this.settings.split(url.getHost());
		this.exchange = exchange;
		this.chain = chain;
	}

	/**
	 * Runs the exchange: resolve, then pick, send and decide until answered.
	 * @return completes when the chain after the attempt filter completed for the attempt
	 * that answers
	 */
	public Mono<Void> run() {
		String service = this.url.getHost();
		SplitSettings split = this.split;
		if (split != null) {
			service = this.services.splits().route(this, split);
			this.exchange = SplitRouting.withoutOverride(this.exchange, split);
		}
		ServiceRuntime runtime = this.services.runtimes().find(service);
		if (runtime == null) {
			String named = service;
			// A service nobody knows is answered as one with no endpoint, and not
			// tracked.
			return this.services.runtimes()
				.whenReady(service)
				.switchIfEmpty(Mono.error(() -> unknownService(named)))
				.flatMap(this::start);
		}
		return start(runtime);
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
			previous.abandon();
		}
		// The route's filter hands the exchange over as it had it: strip the override
		// header again.
		this.exchange = (this.split != null) ? SplitRouting.withoutOverride(exchange, this.split) : exchange;
		this.chain = chain;
		ServiceRuntime runtime = runtime();
		if (!runtime.isBalancedHere()) {
			return passOn(runtime);
		}
		this.retries++;
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
		RolloutTrack shadowStage = this.shadowStage;
		MirrorSettings mirror = runtime.feature(MirrorState.class).settings();
		if (shadowStage != null && !runtime.id().equalsIgnoreCase(shadowStage.plan().target())) {
			// A rollout's shadow stage mirrors to its target (never the target to itself,
			// as a request routed just as the stage ended would); the service's own
			// mirror, if it has one, waits for the stage to end (one mirror per request).
			this.mirror = Mirror.start(this, runtime, Mirror.shadowStage(shadowStage.plan().target()), shadowStage);
		}
		else if (mirror.enabled()) {
			this.mirror = Mirror.start(this, runtime, mirror, null);
		}
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
	 * Sends the next attempt: one pick and one send, or a hedged round.
	 */
	private Mono<Void> next(ServiceRuntime runtime) {
		Hedging hedging = runtime.feature(HedgeState.class).hedging();
		if (hedging != null && hedges(runtime, this.exchange.getRequest())) {
			return HedgedRace.run(this, runtime, hedging)
				.onErrorResume(Shed.class::isInstance, (shed) -> shed(runtime).then(Mono.<HedgedRace.Round>empty()))
				.flatMap((round) -> decide(round.attempt(), round.error()));
		}
		Attempt attempt = pick(runtime, null);
		if (attempt == null) {
			if (this.shed) {
				return shedOrWait(runtime);
			}
			return Mono.error(noEndpoint(runtime));
		}
		// A retry that finds no place waits afresh, as a new request would.
		this.waited = false;
		route(this.exchange, attempt);
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
	Mono<Void> decide(Attempt attempt, @Nullable Throwable error) {
		ServiceRuntime runtime = attempt.runtime();
		ServerHttpResponse response = this.exchange.getResponse();
		noteFirstSend(attempt);
		if (error == null) {
			HttpStatusCode code = response.getStatusCode();
			if (code == null || attempt.phase() != Outcome.Phase.RECEIVING) {
				// The rest of the chain completed without an upstream answer (a WebSocket
				// session, a filter that answered itself): nothing to judge.
				settleAffinity(runtime, null);
				return Mono.empty();
			}
			int status = code.value();
			RolloutWindow rollout = this.rollout;
			if (rollout != null) {
				rollout.answered(this.rolloutClient, status, runtime.nanoTime() - attempt.startNanos());
			}
			Outcome.Kind kind = Outcome.ofStatus(status, attempt.countsAsFailure(status));
			if (kind == Outcome.Kind.SERVER_ERROR) {
				attempt.settle(kind);
			}
			if (response.isCommitted() || !mayRetry(runtime, kind, status)) {
				settleAffinity(runtime, attempt);
				Mirror mirror = this.mirror;
				if (mirror != null) {
					mirror.primaryAnswered(status);
				}
				return Mono.empty();
			}
			return retry(attempt, runtime);
		}
		Outcome.Kind kind = Outcome.classify(attempt.phase(), error);
		attempt.end(kind);
		RolloutWindow rollout = this.rollout;
		if (rollout != null && kind.charge() == Outcome.Charge.FAILURE) {
			// What passive health charges the endpoint for (a connection failure, a
			// timeout); nothing for a client that left or an attempt the gateway gave up.
			rollout.failed(this.rolloutClient);
		}
		if (kind == Outcome.Kind.NOT_UPSTREAM) {
			settleAffinity(runtime, null);
			return Mono.error(error);
		}
		if (kind == Outcome.Kind.SATURATED) {
			if (Outcome.isPoolClosing(error) && this.repicks < MAX_REPICKS) {
				// The pool closed as this request took it: its endpoint left discovery,
				// or a refresh replaced the service's pools. Nothing left the gateway:
				// pick again from the service as it is now, without spending a retry.
				this.repicks++;
				ServiceRuntime current = this.services.runtimes().find(runtime.id());
				ServiceRuntime next = (current != null) ? current : runtime;
				this.runtime = next;
				ServerWebExchangeUtils.reset(this.exchange);
				return next(next);
			}
			runtime.counters().saturated().increment();
		}
		if (!response.isCommitted() && mayRetry(runtime, kind, 0)) {
			return retry(attempt, runtime);
		}
		if (rollout != null && kind == Outcome.Kind.SATURATED) {
			// The side's own pool was full: the client gets the gateway's 503, and a
			// canary too small for its step must not look healthy for it.
			rollout.failed(this.rolloutClient);
		}
		settleAffinity(runtime, null);
		return GatewayAnswer.write(this.exchange, kind, runtime.id(), error);
	}

	private boolean mayRetry(ServiceRuntime runtime, Outcome.Kind kind, int status) {
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

	private Mono<Void> retry(Attempt attempt, ServiceRuntime runtime) {
		attempt.abandon();
		this.retries++;
		runtime.counters().retried().increment();
		// Drop what the failed attempt left on the exchange: its connection, its headers.
		ServerWebExchangeUtils.reset(this.exchange);
		return next(runtime);
	}

	/**
	 * Picks the endpoint of the exchange's next attempt, claims it and hands the claim to
	 * the lease. A retry goes to an endpoint this exchange has not tried, while one
	 * remains.
	 * @param runtime the service's runtime
	 * @param sendListener told when the attempt's request is sent, or {@code null}
	 * @return the attempt, or {@code null} when the service has no endpoint to pick
	 */
	@Nullable Attempt pick(ServiceRuntime runtime, Attempt.@Nullable SendListener sendListener) {
		Snapshot<Member> snapshot = runtime.snapshot();
		CharSequence key = (snapshot.settings().algorithm() == Algorithm.CONSISTENT_HASH) ? hashKey(runtime) : null;
		EndpointCookie affinityCookie = runtime.feature(AffinityState.class).signer();
		int index = (affinityCookie != null && this.affinity == null) ? follow(runtime, snapshot, affinityCookie) : -1;
		if (index < 0 && this.firstTried != null && snapshot.drawsLevels()) {
			// A retry with localities: another endpoint of the level of the one tried
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
		int partition = -1;
		OverloadState overload = runtime.feature(OverloadState.class);
		if (overload.settings().partitioned()) {
			Partitions partitions = overload.partitions();
			partition = partitions.indexOf(partitionName(runtime));
			if (partitions.underShare(partition) || (index == Snapshot.AT_LIMIT && partitions.hasSpare(partition))) {
				if (index == Snapshot.AT_LIMIT) {
					// Every endpoint is at its limit, but the partition has not had its
					// share of the service's limit, or another is further past its own:
					// it goes over, and the partitions furthest past their shares are the
					// ones shed.
					index = snapshot.selectOverLimit(key);
				}
			}
			else if (index >= 0 && (!partitions.hasSpare(partition)
					|| (sendListener == null && !this.waited && partitions.waiting() > 0))) {
				// Past its share, the service at its limit, and no other partition
				// further past its own: this one is shed first. Or requests wait for a
				// place (concurrency.max-wait): one past its share does not take the
				// place a request that ended freed for them; it waits behind them. A
				// hedged round's pick (with a send listener) cannot wait: not held back.
				index = Snapshot.AT_LIMIT;
			}
			if (index >= 0) {
				partitions.acquire(partition);
			}
		}
		runtime.noteFailOpen(snapshot);
		if (index < 0) {
			this.shed = index == Snapshot.AT_LIMIT;
			this.shedPartition = partition;
			return null;
		}
		Attempt attempt = claim(runtime, snapshot, index, this.firstSentNanos, sendListener, partition);
		remember(attempt.endpoint().address());
		this.lease.hold(attempt);
		return attempt;
	}

	/**
	 * Follows the request's affinity cookie, at the exchange's first pick: the index of
	 * the endpoint a valid cookie names if the session may stay there
	 * ({@link Snapshot#follow}), else -1 for the service's algorithm to pick. Decides the
	 * request's affinity outcome. A cookie this service did not sign (tampered with, of
	 * another service, of a secret no longer accepted) is ignored, never an error.
	 */
	private int follow(ServiceRuntime runtime, Snapshot<Member> snapshot, EndpointCookie cookie) {
		// The value is checked where it lies in the Cookie line: no copy of it.
		List<String> lines = this.exchange.getRequest().getHeaders().get(HttpHeaders.COOKIE);
		String name = runtime.feature(AffinityState.class).settings().cookie().name();
		for (int i = 0; lines != null && i < lines.size(); i++) {
			String line = lines.get(i);
			long bounds = Cookies.bounds(line, name);
			if (bounds == Cookies.ABSENT) {
				continue;
			}
			int start = Cookies.start(bounds);
			int end = Cookies.end(bounds);
			if (start == end) {
				break;
			}
			int secret = cookie.check(line, start, end);
			if (secret == EndpointCookie.REJECTED) {
				this.affinity = AffinityOutcome.REJECTED;
				return -1;
			}
			this.previousSecret = secret > 0;
			int index = snapshot.follow(EndpointCookie.endpointIdOf(line, start));
			if (index < 0) {
				this.affinity = AffinityOutcome.MOVED;
				return -1;
			}
			this.affinity = AffinityOutcome.FOLLOWED;
			this.followed = snapshot.state(index);
			return index;
		}
		this.affinity = AffinityOutcome.NEW;
		return -1;
	}

	/**
	 * Counts what became of the request's affinity, once, when the exchange's answer is
	 * decided, and sets the affinity cookie on an upstream's answer: a session that
	 * arrived without a valid cookie, or whose endpoint could not take it, or that a
	 * retry or a backup moved, gets one naming the endpoint that answered. With
	 * {@code learn}, only an answer that sets the application's cookie sets it, and one
	 * that expires the application's cookie expires it.
	 * @param runtime the service's runtime
	 * @param answered the attempt whose answer the client gets, or {@code null} when the
	 * gateway answers
	 */
	private void settleAffinity(ServiceRuntime runtime, @Nullable Attempt answered) {
		AffinityOutcome outcome = this.affinity;
		AffinityState state = runtime.feature(AffinityState.class);
		EndpointCookie cookie = state.signer();
		if (outcome == null || cookie == null || this.affinityCounted) {
			return;
		}
		this.affinityCounted = true;
		EndpointState followed = this.followed;
		if (answered != null) {
			if (outcome == AffinityOutcome.FOLLOWED && answered.endpoint() != followed) {
				outcome = AffinityOutcome.MOVED;
			}
			setAffinityCookie(state.settings(), cookie, answered, outcome);
			if (outcome == AffinityOutcome.FOLLOWED && followed != null) {
				state.followed(followed);
			}
		}
		else if (outcome == AffinityOutcome.FOLLOWED && followed != null && !followed.address().equals(lastTried())) {
			// The gateway answered, after a retry left the session's endpoint.
			outcome = AffinityOutcome.MOVED;
		}
		state.outcome(outcome).increment();
	}

	private void setAffinityCookie(AffinitySettings settings, EndpointCookie cookie, Attempt answered,
			AffinityOutcome outcome) {
		ServerHttpResponse response = this.exchange.getResponse();
		if (response.isCommitted()) {
			return;
		}
		CookieSettings attributes = settings.cookie();
		String learn = settings.learn();
		if (learn != null) {
			SetCookies.Change change = SetCookies.of(response.getHeaders().get(HttpHeaders.SET_COOKIE), learn,
					Instant.now());
			if (change == SetCookies.Change.EXPIRED) {
				if (outcome != AffinityOutcome.NEW) {
					response.addCookie(attributes.toExpiredCookie());
				}
				return;
			}
			// A session is one the answer starts, or one the request carries: a session
			// kept in a store the endpoints share still needs its new endpoint named
			// when it moved, and its cookie signed with the current secret.
			boolean session = change == SetCookies.Change.SET || carries(learn);
			if (!session || (change != SetCookies.Change.SET && outcome == AffinityOutcome.FOLLOWED
					&& !this.previousSecret)) {
				return;
			}
		}
		else if (outcome == AffinityOutcome.FOLLOWED && !this.previousSecret) {
			return;
		}
		ServerHttpRequest request = this.exchange.getRequest();
		String value = cookie.sign(EndpointCookie.endpointId(answered.member().endpoint().address()));
		response.addCookie(attributes.toResponseCookie(value,
				SplitRouting.cameOverHttps(request, request.getRemoteAddress(), this.settings.trustedProxies())));
	}

	/**
	 * Returns whether the request carries a cookie of that name.
	 */
	private boolean carries(String name) {
		List<String> lines = this.exchange.getRequest().getHeaders().get(HttpHeaders.COOKIE);
		for (int i = 0; lines != null && i < lines.size(); i++) {
			if (Cookies.bounds(lines.get(i), name) != Cookies.ABSENT) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Picks and claims an endpoint for a backup of the current attempt: one this exchange
	 * has not tried, if the hedge budget has room. Not held by the lease (the race
	 * releases it, or makes it the lease's when it wins), not remembered as tried until
	 * the race is decided. Called on the hedge timer's thread while the round waits: it
	 * only reads what the exchange wrote before the round started.
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
		return claim(runtime, snapshot, index, primary.firstSentOfExchangeNanos(), null, -1);
	}

	private Attempt claim(ServiceRuntime runtime, Snapshot<Member> snapshot, int index, long firstSentNanos,
			Attempt.@Nullable SendListener sendListener, int partition) {
		return new Attempt(snapshot.claim(index), snapshot.ewmaDecayNanos(), runtime, snapshot.value(index), this.lease,
				this.rollout != null, firstSentNanos, sendListener, partition);
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
		if (this.schemePrefix != null) {
			// Resolved: the gateway's load-balancer filter must not resolve it again.
			exchange.getAttributes().remove(ServerWebExchangeUtils.GATEWAY_SCHEME_PREFIX_ATTR);
		}
	}

	/**
	 * Keeps the time the exchange's first request was sent, the start of its deadline.
	 */
	private void noteFirstSend(Attempt attempt) {
		if (this.firstSentNanos == 0) {
			this.firstSentNanos = attempt.firstSentOfExchangeNanos();
		}
	}

	/**
	 * Returns the request's URL with the endpoint's scheme, host and port: what Spring
	 * Cloud Gateway's load-balancer filter would make of it. The scheme is the endpoint's
	 * ({@code https} when it is secure), or the route's own after an {@code lb:} prefix
	 * ({@code lb:ws://}). The path and query are those of the {@code lb://} URL the
	 * gateway's route-to-request-URL filter built, not the request's as the client sent
	 * it: that filter rebuilds them (an empty {@code ?} and empty query parameters
	 * dropped, {@code //} collapsed) and the load-balancer filter keeps what it built, so
	 * a backend sees the same target with the starter as without it.
	 */
	URI endpointUrl(Member member) {
		URI original = this.url;
		String scheme = (this.schemePrefix != null) ? this.url.getScheme() : (member.secure() ? "https" : "http");
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
	 * Returns the request's partition name of the concurrency limit
	 * ({@code concurrency.partition-by}), read where a hash key would be.
	 */
	private @Nullable CharSequence partitionName(ServiceRuntime runtime) {
		HashKey source = runtime.feature(OverloadState.class).settings().partitionBy();
		return (source != null) ? keyValue(source) : null;
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
	 * Makes {@code key} the exchange's consistent-hash key: a sticky split's affinity
	 * value, so that a session also pins one endpoint of its target.
	 */
	void pinHashKey(CharSequence key) {
		this.hashKey = key;
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
					request.getHeaders().get("X-Forwarded-For"), this.settings.trustedProxies());
			this.clientAddress = address;
		}
		return (InetAddress) address;
	}

	/**
	 * Mirrors the exchange to a rollout's target for its shadow stage.
	 * @param rollout the rollout, in its shadow stage
	 */
	void shadowFor(RolloutTrack rollout) {
		this.shadowStage = rollout;
	}

	/**
	 * Makes the exchange's attempts record their outcomes on a rollout's side.
	 * @param window the side, or {@code null} when the step is not judged
	 * @param client the hash of the client's identity, which the side counts at most
	 * {@code max-outcomes-per-client} answers of per interval
	 */
	void judgeOn(@Nullable RolloutWindow window, int client) {
		this.rollout = window;
		this.rolloutClient = client;
	}

	ServerWebExchange exchange() {
		return this.exchange;
	}

	/**
	 * Makes the exchange's attempts go out with {@code exchange}, the same exchange
	 * decorated (a mirror's copy of the request body).
	 */
	void replaceExchange(ServerWebExchange exchange) {
		this.exchange = exchange;
	}

	ProxyServices services() {
		return this.services;
	}

	GatewayFilterChain chain() {
		return this.chain;
	}

	GatewayLbSettings settings() {
		return this.settings;
	}

	ExchangeLease lease() {
		return this.lease;
	}

	private ServiceRuntime runtime() {
		ServiceRuntime runtime = this.runtime;
		if (runtime == null) {
			// The chain runs again only after a first run that resolved the service.
			throw new IllegalStateException("the exchange has no service yet");
		}
		return runtime;
	}

	/**
	 * Returns whether the exchange is the first of its service's: a hedged round counts a
	 * request once in the hedge budget, however many rounds it takes.
	 */
	boolean isFirstRound() {
		return this.retries == 0 && this.repicks == 0;
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
	 * Returns the address of the endpoint this exchange tried last, or {@code null}.
	 */
	private @Nullable String lastTried() {
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

	/**
	 * Returns whether a request may get a backup: one that may be sent twice (the retry
	 * rule: an idempotent method, no body), and not a WebSocket upgrade.
	 */
	/**
	 * Returns whether a request is hedged: a method of {@code hedge.methods}, no body (a
	 * backup must send it again), not a WebSocket upgrade.
	 */
	private static boolean hedges(ServiceRuntime runtime, ServerHttpRequest request) {
		HttpHeaders headers = request.getHeaders();
		return runtime.feature(HedgeState.class).settings().hedges(request.getMethod().name())
				&& !RequestBodyIdle.hasBody(headers) && !"websocket".equalsIgnoreCase(headers.getUpgrade());
	}

	/**
	 * Returns what a service with no endpoint to pick answers, and counts it as an error
	 * of the rollout side the exchange is judged on: a canary with no endpoint is judged
	 * by what its share of the clients get.
	 */
	NotFoundException noEndpoint(ServiceRuntime runtime) {
		runtime.counters().noEndpoint().increment();
		settleAffinity(runtime, null);
		RolloutWindow rollout = this.rollout;
		if (rollout != null) {
			rollout.failed(this.rolloutClient);
		}
		return unknownService(runtime.id());
	}

	/**
	 * Returns why the last pick found nothing, for a hedged round to fail with: the
	 * signal of a shed request, which the owner answers, or the answer of a service with
	 * no endpoint.
	 * @param runtime the service's runtime
	 * @return the error
	 */
	RuntimeException noPick(ServiceRuntime runtime) {
		return this.shed ? Shed.INSTANCE : noEndpoint(runtime);
	}

	/**
	 * Says that a hedged round's first pick found every endpoint at its limit: never
	 * leaves the owner, so it has no stack.
	 */
	private static final class Shed extends RuntimeException {

		static final Shed INSTANCE = new Shed();

		private Shed() {
			super("every endpoint at its concurrency limit", null, false, false);
		}

	}

	/**
	 * Sheds a request that found every endpoint at its limit, or, with
	 * {@code concurrency.max-wait}, queues it for a place: a request that ends wakes it
	 * ({@link Partitions#wakeOne}) and it picks again, on its own event loop; a place
	 * another request took first sends it back to the head of the queue. At the deadline,
	 * one deadline from its first wait, it picks once more and is shed if that finds no
	 * place either (so a place freed while it was being queued, which woke nobody, costs
	 * a wait but never a shed). A request whose partition's queue is full is shed at
	 * once. A client that leaves while waiting takes its place in the queue with it, and
	 * passes a wake it got on to the next waiter. A hedged round does not wait.
	 */
	private Mono<Void> shedOrWait(ServiceRuntime runtime) {
		long maxWait = runtime.feature(OverloadState.class).settings().maxWait().toNanos();
		if (maxWait == 0) {
			return shed(runtime);
		}
		long now = runtime.nanoTime();
		boolean again = this.waited;
		if (!again) {
			this.waited = true;
			this.waitDeadlineNanos = now + maxWait;
		}
		long remaining = this.waitDeadlineNanos - now;
		if (remaining <= 0) {
			return shed(runtime);
		}
		// The pick after the wait follows the affinity cookie again: the endpoint
		// it names may be the one with a place now.
		this.affinity = null;
		this.followed = null;
		this.previousSecret = false;
		Partitions partitions = runtime.feature(OverloadState.class).partitions();
		int queue = (this.shedPartition >= 0) ? this.shedPartition : partitions.indexOf(null);
		Executor loop = serverEventLoop();
		// A woken waiter is handed over once: by its pick, or, when its client
		// left before the wake arrived, by the cancellation, which passes the
		// wake on.
		AtomicBoolean handedOver = new AtomicBoolean();
		return Mono.<Boolean>create((sink) -> {
			Partitions.Waiter waiter = partitions.await(queue, again, () -> onLoop(loop, () -> sink.success(true)));
			if (waiter == null) {
				sink.success(false);
				return;
			}
			Disposable.Swap timer = Disposables.swap();
			// Runs after the woken pick on success (Mono.create emits, then disposes), or
			// on a cancellation from any thread.
			sink.onDispose(() -> {
				timer.dispose();
				if (!partitions.cancel(waiter) && waiter.woken() && handedOver.compareAndSet(false, true)) {
					partitions.handOverTaken();
					partitions.wakeOne();
				}
			});
			// The deadline, on the request's own event loop too: the exchange stays
			// confined to it. The pick it makes is the waiter's last.
			timer.update(Schedulers.parallel().schedule(() -> {
				if (partitions.cancel(waiter)) {
					onLoop(loop, () -> sink.success(false));
				}
			}, remaining, TimeUnit.NANOSECONDS));
		}).flatMap((woken) -> {
			if (!woken) {
				return lastPick(runtime);
			}
			try {
				return next(runtime);
			}
			finally {
				// Through its pick: a place taken or the queue rejoined.
				if (handedOver.compareAndSet(false, true)) {
					partitions.handOverTaken();
				}
			}
		});
	}

	/**
	 * The pick a waiter makes at its deadline: sent if a place is free, shed otherwise.
	 */
	private Mono<Void> lastPick(ServiceRuntime runtime) {
		this.waitDeadlineNanos = runtime.nanoTime();
		return next(runtime);
	}

	private static void onLoop(Executor loop, Runnable task) {
		try {
			loop.execute(task);
		}
		catch (RejectedExecutionException ex) {
			// The event loop is shutting down: run it here rather than lose it.
			task.run();
		}
	}

	/**
	 * Returns the event loop of the client's connection, or a direct executor for an
	 * exchange that is not Reactor Netty's (a test's).
	 */
	private Executor serverEventLoop() {
		try {
			Object inbound = ServerHttpRequestDecorator.getNativeRequest(this.exchange.getRequest());
			if (inbound instanceof Connection connection) {
				return connection.channel().eventLoop();
			}
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			// Not a server request of Spring's, or a mock one without a native request.
		}
		return Runnable::run;
	}

	/**
	 * Answers a request shed because every endpoint is at its concurrency limit: 503 with
	 * {@code Retry-After}, at once, charged to nobody and never retried (a retry would
	 * only add to the overload). A rollout does not count it: what an overloaded service
	 * sheds says nothing of the release.
	 */
	private Mono<Void> shed(ServiceRuntime runtime) {
		runtime.feature(OverloadState.class).shed().increment();
		settleAffinity(runtime, null);
		return GatewayAnswer.write(this.exchange, Outcome.Kind.SHED, runtime.id(), null);
	}

	/**
	 * Returns what Spring Cloud Gateway's own filter answers for a service without an
	 * instance: 503, or 404 with its {@code use404}.
	 */
	private NotFoundException unknownService(String service) {
		return NotFoundException.create(this.services.use404(), "Unable to find instance for " + service);
	}

}
