package dev.gatewaylb.gateway.filter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.runtime.ServiceRuntimes;
import dev.gatewaylb.rollout.RolloutWindow;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.web.server.ServerWebExchange;

/**
 * One exchange's hold on gateway-lb: the service it resolved, its current attempt (whose
 * in-flight claim it keeps), the endpoints it tried, and its deadline. Kept in an
 * exchange attribute from {@link InFlightReleaseFilter}, which opens it, until the whole
 * exchange is over: body written, error, or client gone.
 * <p>
 * Thread-safe where threads meet, without a lock: the current attempt lives in one field
 * updated by compare-and-set, and a closed lease releases any attempt handed to it at
 * once, so a pick that races a cancellation cannot leak; the first send time is written
 * by the upstream connection's event loop and read by the retry decision, through a
 * volatile field. The rest (runtime, endpoints tried, attempt count) is written and read
 * only by the attempt filter, which handles one attempt of an exchange at a time, each
 * step after the previous one in the reactive chain.
 */
public final class ExchangeLease implements Runnable, Consumer<SignalType> {

	/**
	 * The exchange attribute holding the lease.
	 */
	public static final String ATTRIBUTE = ExchangeLease.class.getName();

	/**
	 * The least time a retry must have before the deadline to be worth sending.
	 */
	static final long MIN_RETRY_NANOS = 1_000_000;

	private static final Object CLOSED = new Object();

	private final ServiceRuntimes runtimes;

	private final @Nullable InetSocketAddress remoteAddress;

	private static final VarHandle CURRENT;

	static {
		try {
			CURRENT = MethodHandles.lookup().findVarHandle(ExchangeLease.class, "current", Object.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/**
	 * The current attempt, or {@link #CLOSED}; accessed through {@link #CURRENT}, a field
	 * rather than an {@code AtomicReference} so that a lease is one object.
	 */
	@SuppressWarnings("unused")
	private volatile @Nullable Object current;

	private volatile boolean clientGone;

	/**
	 * Whether the exchange's attempts race (hedged requests): then two run at once, and
	 * each carries itself on its own exchange. Written before the first race's attempt is
	 * subscribed, read by the routing filter on any of the attempts' threads; it never
	 * goes back.
	 */
	private volatile boolean hedged;

	/**
	 * When the first attempt's request was sent, by the balancer clock; 0 until then.
	 */
	private volatile long firstSentNanos;

	private @Nullable ServiceRuntime runtime;

	private @Nullable ServerWebExchange exchange;

	private @Nullable GatewayFilterChain chain;

	private @Nullable URI url;

	private @Nullable String schemePrefix;

	private @Nullable AttemptFilter filter;

	private @Nullable CharSequence hashKey;

	private boolean hashKeyResolved;

	/**
	 * Where the exchange's attempts record their outcomes for a rollout's judgement, set
	 * once by the split before the first attempt.
	 */
	private @Nullable RolloutWindow rolloutWindow;

	/**
	 * The address of the first attempt, and of later ones (retries, rare) in a list made
	 * only when needed: the common exchange allocates nothing for this.
	 */
	private @Nullable String firstTried;

	private @Nullable List<String> laterTried;

	private int attempts;

	/**
	 * Creates a lease for an exchange from {@code remoteAddress}.
	 * @param runtimes every service's runtime, which outcomes are reported to
	 * @param remoteAddress the address of the connection's peer, or {@code null}
	 */
	public ExchangeLease(ServiceRuntimes runtimes, @Nullable InetSocketAddress remoteAddress) {
		this.runtimes = runtimes;
		this.remoteAddress = remoteAddress;
	}

	/**
	 * Returns the address of the connection's peer.
	 * @return the remote address, or {@code null} if unknown
	 */
	public @Nullable InetSocketAddress remoteAddress() {
		return this.remoteAddress;
	}

	/**
	 * Returns the runtimes that outcomes are reported to.
	 * @return the runtimes
	 */
	ServiceRuntimes runtimes() {
		return this.runtimes;
	}

	/**
	 * Returns the runtime of the service this exchange goes to.
	 * @return the runtime, or {@code null} before the attempt filter resolved it
	 */
	public @Nullable ServiceRuntime runtime() {
		return this.runtime;
	}

	void resolved(ServiceRuntime runtime) {
		this.runtime = runtime;
	}

	/**
	 * Keeps what every attempt of the exchange needs: the exchange (possibly mutated by
	 * route filters), the rest of the chain, the {@code lb://} URL and its scheme prefix.
	 */
	void route(ServerWebExchange exchange, GatewayFilterChain chain, URI url, @Nullable String schemePrefix,
			AttemptFilter filter) {
		this.exchange = exchange;
		this.chain = chain;
		this.url = url;
		this.schemePrefix = schemePrefix;
		this.filter = filter;
	}

	ServerWebExchange exchange() {
		return Objects.requireNonNull(this.exchange, "exchange");
	}

	GatewayFilterChain chain() {
		return Objects.requireNonNull(this.chain, "chain");
	}

	URI url() {
		return Objects.requireNonNull(this.url, "url");
	}

	@Nullable String schemePrefix() {
		return this.schemePrefix;
	}

	AttemptFilter filter() {
		return Objects.requireNonNull(this.filter, "filter");
	}

	/**
	 * Returns the consistent-hash key the attempt filter resolved, once.
	 */
	@Nullable CharSequence hashKey() {
		return this.hashKey;
	}

	boolean hashKeyResolved() {
		return this.hashKeyResolved;
	}

	void hashKey(@Nullable CharSequence key) {
		this.hashKey = key;
		this.hashKeyResolved = true;
	}

	@Nullable RolloutWindow rolloutWindow() {
		return this.rolloutWindow;
	}

	void rolloutWindow(@Nullable RolloutWindow window) {
		this.rolloutWindow = window;
	}

	/**
	 * Takes a new attempt, releasing the previous one's claim.
	 * @param attempt the attempt
	 */
	void hold(Attempt attempt) {
		remember(attempt.endpoint().address());
		this.attempts++;
		swap(attempt);
	}

	/**
	 * Notes that a backup of the current attempt went to {@code address}: later attempts
	 * avoid it too, but a backup is not a retry and does not count as an attempt. Called
	 * by the hedge timer while the current attempt runs; what it writes is read after the
	 * race is decided, which publishes it.
	 * @param address {@code host:port}
	 */
	void triedAlso(String address) {
		remember(address);
	}

	/**
	 * Makes the attempt that won a hedged race the current one, releasing the claim of
	 * the one it replaces.
	 * @param winner the attempt whose headers came first
	 */
	void promote(Attempt winner) {
		swap(winner);
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

	private void swap(Attempt attempt) {
		Object previous;
		do {
			previous = this.current;
			if (previous == CLOSED) {
				attempt.release();
				return;
			}
		}
		while (!CURRENT.compareAndSet(this, previous, attempt));
		if (previous instanceof Attempt replaced && replaced != attempt) {
			replaced.release();
		}
	}

	/**
	 * Returns whether an earlier attempt of this exchange went to {@code address}.
	 * @param address {@code host:port}
	 * @return whether tried
	 */
	public boolean tried(String address) {
		List<String> later = this.laterTried;
		return address.equals(this.firstTried) || (later != null && later.contains(address));
	}

	/**
	 * Notes that the exchange's attempts race from now on.
	 */
	void hedged() {
		this.hedged = true;
	}

	/**
	 * Returns whether the exchange's attempts race, two at once.
	 * @return whether hedged
	 */
	boolean isHedged() {
		return this.hedged;
	}

	/**
	 * Returns how many attempts this exchange has made.
	 * @return the attempts
	 */
	public int attempts() {
		return this.attempts;
	}

	/**
	 * Returns the current attempt.
	 * @return the attempt, or {@code null} before the first pick and after close
	 */
	@Nullable Attempt attempt() {
		return (this.current instanceof Attempt attempt) ? attempt : null;
	}

	/**
	 * Notes that the client went away: what the endpoint does from now on is not its
	 * doing, and is charged to nobody. Called before the cancellation reaches the
	 * upstream connection.
	 */
	void clientGone() {
		this.clientGone = true;
	}

	boolean isClientGone() {
		return this.clientGone;
	}

	/**
	 * Reports an error of the upstream's response body, as the body publisher signalled
	 * it: the current attempt failed after its headers, unless the client went away
	 * first.
	 * @param error the error
	 */
	void bodyFailed(Throwable error) {
		Attempt attempt = attempt();
		if (attempt != null) {
			attempt.responseFailed(error);
		}
	}

	/**
	 * Notes that the client went away ({@link #clientGone()}): the lease is its own
	 * {@code doOnCancel} hook, so opening an exchange allocates no lambda.
	 */
	@Override
	public void run() {
		clientGone();
	}

	/**
	 * Closes the lease when the exchange ends, however it ends: the lease is its own
	 * {@code doFinally} hook.
	 * @param signal how the exchange ended
	 */
	@Override
	public void accept(SignalType signal) {
		close();
	}

	/**
	 * Releases the current attempt's claim and any later one; idempotent.
	 */
	public void close() {
		if (CURRENT.getAndSet(this, CLOSED) instanceof Attempt last) {
			last.release();
		}
	}

	/**
	 * Returns the header deadline of an attempt whose request is about to be sent, and
	 * starts the clocks that need it: {@code timeouts.response} bounds the client's whole
	 * wait for the headers from the first send on, so a retry gets only what is left of
	 * it. The first attempt reads the clock only when a retry or the latency sample will
	 * need the time.
	 * @param attempt the attempt
	 * @return the deadline, or {@code null} for none
	 */
	@Nullable Duration requestPrepared(Attempt attempt) {
		ServiceRuntime runtime = attempt.runtime();
		Duration full = runtime.settings().upstream().responseTimeout();
		boolean retries = runtime.settings().retry().attempts() > 0;
		boolean hedges = runtime.hedging() != null;
		// A rollout's judgement reads the attempt's latency too.
		boolean latency = runtime.recordsLatency() || hedges || this.rolloutWindow != null;
		long now = (retries || latency || this.firstSentNanos != 0) ? this.runtimes.nanoTime() : 0;
		if (latency) {
			attempt.start(now);
		}
		long first = this.firstSentNanos;
		if (first == 0) {
			if (retries || hedges) {
				// 0 means "not yet": a clock that reads 0 loses a nanosecond.
				this.firstSentNanos = (now != 0) ? now : 1;
			}
			if (retries) {
				runtime.budget().requested(now);
			}
			return full.isZero() ? null : full;
		}
		if (full.isZero()) {
			return null;
		}
		return Duration.ofNanos(Math.max(MIN_RETRY_NANOS, first + full.toNanos() - now));
	}

	/**
	 * Returns whether a retry would still have time before the deadline.
	 * @param runtime the service's runtime
	 * @param nowNanos the balancer clock's current time
	 * @return whether there is time left
	 */
	boolean hasTimeLeft(ServiceRuntime runtime, long nowNanos) {
		Duration full = runtime.settings().upstream().responseTimeout();
		long first = this.firstSentNanos;
		return full.isZero() || first == 0 || first + full.toNanos() - nowNanos >= MIN_RETRY_NANOS;
	}

}
