package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * A real HTTP server on loopback that answers every request with its name, in the body
 * and in {@code X-Backend}, after an adjustable delay, and counts what it served. The
 * status is 200, or the request's {@code status} query parameter, or 500 for every
 * {@link #failEvery n-th} request that names none (of all, or of each client's).
 * <p>
 * A request can be held: it waits, counted {@link #held()} and {@link #active()}, until
 * the test {@link #release() releases} it, for a test that needs an answer to come after
 * an event of its own rather than after a time. Held are the requests that carry a
 * {@code hold=1} query parameter or that a {@link #holdWhen draw} picks, until the first
 * release, and every request while the backend {@link #hold() holds}.
 */
final class TestBackend implements AutoCloseable {

	private final String name;

	private final DisposableServer server;

	private final AtomicLong delayMillis = new AtomicLong();

	private final AtomicInteger requests = new AtomicInteger();

	private final Map<String, AtomicInteger> requestsByMethod = new ConcurrentHashMap<>();

	/**
	 * Requests whose answer the caller gave up on before it was sent: the connection
	 * closed (HTTP/1.1) or the stream was reset (h2) under them.
	 */
	private final AtomicInteger cancelled = new AtomicInteger();

	/**
	 * Draws each answer's delay when set, in place of the fixed one.
	 */
	private volatile @Nullable LongSupplier delays;

	private final AtomicInteger active = new AtomicInteger();

	private final AtomicInteger held = new AtomicInteger();

	/**
	 * Which requests are held: those that ask (from the start), every one, or none (from
	 * a release on).
	 */
	private volatile Holding holding = Holding.ASKING;

	/**
	 * What the requests held now wait for; replaced by each {@link #release()}.
	 */
	private volatile Sinks.Empty<Void> gate = Sinks.empty();

	/**
	 * Draws whether a request that does not ask is held, when set.
	 */
	private volatile @Nullable BooleanSupplier holdDraws;

	private final AtomicInteger failEvery = new AtomicInteger();

	/**
	 * The requests without a {@code status} parameter, which {@link #failEvery} counts.
	 */
	private final AtomicLong unnamedStatuses = new AtomicLong();

	/**
	 * The header whose value tells clients apart for {@link #failEvery}, which then
	 * counts each client's requests apart; {@code null} to count all together.
	 */
	private volatile @Nullable String clientHeader;

	private final Map<String, AtomicLong> unnamedStatusesByClient = new ConcurrentHashMap<>();

	/**
	 * Whether every answer's body breaks off after its headers.
	 */
	private volatile boolean cutBodies;

	private final AtomicInteger maxActive = new AtomicInteger();

	private final AtomicInteger connections = new AtomicInteger();

	private final AtomicInteger maxConnections = new AtomicInteger();

	private final Set<String> headerNames = ConcurrentHashMap.newKeySet();

	/**
	 * The port the next backend tries first. Backends started one after the other get
	 * ascending ports, so a service's endpoints are listed (by address) in the order a
	 * test started its backends, and a test can name the first endpoint or a weighted
	 * sequence by backend. Below Linux's ephemeral range, so clients' ports never take
	 * it.
	 */
	private static final AtomicInteger nextPort = new AtomicInteger(
			20_000 + (int) (ProcessHandle.current().pid() % 500) * 20);

	/**
	 * The backends' own event loops, as a backend in a process of its own would have: a
	 * gateway context that closes can dispose Reactor Netty's global loops (Spring's
	 * resource factory does when it uses them), and a backend's socket on them could then
	 * not be closed ("Socket couldn't be stopped within 3000ms"). Daemon threads, never
	 * disposed: they end with the test JVM.
	 */
	private static final LoopResources LOOPS = LoopResources.create("test-backend", 2, true);

	private TestBackend(String name) {
		this.name = name;
		this.server = bind(HttpServer.create().host("127.0.0.1").doOnChannelInit((observer, channel, remote) -> {
			this.maxConnections.accumulateAndGet(this.connections.incrementAndGet(), Math::max);
			channel.closeFuture().addListener((closed) -> this.connections.decrementAndGet());
		}).handle((request, response) -> {
			this.requests.incrementAndGet();
			this.requestsByMethod.computeIfAbsent(request.method().name(), (method) -> new AtomicInteger())
				.incrementAndGet();
			request.requestHeaders().names().forEach((header) -> this.headerNames.add(header.toLowerCase(Locale.ROOT)));
			this.maxActive.accumulateAndGet(this.active.incrementAndGet(), Math::max);
			LongSupplier drawn = this.delays;
			long delay = queryParameter(request.uri(), "delay",
					(drawn != null) ? drawn.getAsLong() : this.delayMillis.get());
			if (this.cutBodies) {
				// Declares 100 bytes, sends 10 and closes the connection: a body that
				// breaks after its headers, the client's answer truncated.
				return response.header("X-Backend", name)
					.header("Content-Length", "100")
					.sendString(Flux.concat(Mono.just("x".repeat(10)),
							Mono.delay(Duration.ofMillis(20))
								.doOnNext((tick) -> response.withConnection(Connection::dispose))
								.then(Mono.<String>never())))
					.then()
					.doFinally((signal) -> this.active.decrementAndGet());
			}
			long stall = queryParameter(request.uri(), "stall", 0);
			if (stall > 0) {
				// Declares 100 bytes, sends 10 at once and the other 90 only after the
				// stall: a body that goes idle after its headers.
				return response.header("X-Backend", name)
					.header("Content-Length", "100")
					.sendString(Flux.concat(Mono.just("x".repeat(10)),
							Mono.delay(Duration.ofMillis(stall)).map((tick) -> "y".repeat(90))))
					.then()
					.doFinally((signal) -> this.active.decrementAndGet());
			}
			long chunks = queryParameter(request.uri(), "chunks", 0);
			if (chunks > 0) {
				// Headers now, then one chunk per gap: a body that takes a while.
				Duration gap = Duration.ofMillis(queryParameter(request.uri(), "gap", 100));
				return response.header("X-Backend", name)
					.sendString(Flux.interval(gap).take(chunks).map((i) -> name + i + "\n"))
					.then()
					.doFinally((signal) -> this.active.decrementAndGet());
			}
			// A request stops counting as held when its answer starts: the caller may
			// have the answer, and send its next request on the same connection, before
			// this publisher terminates. Released once, whichever comes first.
			AtomicBoolean released = new AtomicBoolean();
			Runnable release = () -> {
				if (released.compareAndSet(false, true)) {
					this.active.decrementAndGet();
				}
			};
			long status = queryParameter(request.uri(), "status", 0);
			if (status == 0) {
				int every = this.failEvery.get();
				String clientHeader = this.clientHeader;
				String client = (clientHeader != null) ? request.requestHeaders().get(clientHeader, "") : null;
				long number = (client != null) ? this.unnamedStatusesByClient
					.computeIfAbsent(client, (key) -> new AtomicLong(Math.floorMod(key.hashCode(), every)))
					.incrementAndGet() : this.unnamedStatuses.incrementAndGet();
				status = (every > 0 && number % every == 0) ? 500 : 200;
			}
			Mono<Void> answer = Mono.fromRunnable(release)
				.then(response.status((int) status)
					.header("X-Backend", name)
					.header("X-Backend-Delay", String.valueOf(delay))
					.header("Content-Type", "text/plain")
					.sendString(Mono.just(name))
					.then());
			Mono<Void> delayed = (delay > 0) ? Mono.delay(Duration.ofMillis(delay)).then(answer) : answer;
			// The gate before the flag: a release in between lets this request go with
			// those it releases, never leaves it behind a gate nobody opens.
			Sinks.Empty<Void> gate = this.gate;
			Holding holding = this.holding;
			BooleanSupplier draws = this.holdDraws;
			if (holding == Holding.ALL || (holding == Holding.ASKING
					&& (queryParameter(request.uri(), "hold", 0) > 0 || (draws != null && draws.getAsBoolean())))) {
				this.held.incrementAndGet();
				delayed = gate.asMono().doFinally((signal) -> this.held.decrementAndGet()).then(delayed);
			}
			return delayed.doFinally((signal) -> {
				if (signal == SignalType.CANCEL) {
					this.cancelled.incrementAndGet();
				}
				release.run();
			});
		}));
	}

	/**
	 * Binds the next free port above every port a backend of this JVM took.
	 */
	static DisposableServer bind(HttpServer server) {
		RuntimeException last = null;
		for (int i = 0; i < 200; i++) {
			int port = nextPort.getAndIncrement();
			try {
				return server.runOn(LOOPS).port(port).bindNow();
			}
			catch (RuntimeException ex) {
				last = ex;
			}
		}
		throw new IllegalStateException("no free port for a test backend", last);
	}

	/**
	 * Returns a numeric query parameter, or the default.
	 */
	private static long queryParameter(String uri, String name, long otherwise) {
		int at = uri.indexOf(name + "=");
		if (at < 0) {
			return otherwise;
		}
		int end = uri.indexOf('&', at);
		return Long.parseLong(uri.substring(at + name.length() + 1, (end < 0) ? uri.length() : end));
	}

	static TestBackend start(String name) {
		return new TestBackend(name);
	}

	String name() {
		return this.name;
	}

	int port() {
		return this.server.port();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/**
	 * Answers every {@code n}-th request without a {@code status} parameter with 500; 0
	 * for none.
	 */
	void failEvery(int n) {
		this.failEvery.set(n);
	}

	/**
	 * Answers every {@code n}-th request of each client that names no {@code status} with
	 * 500, a client being a value of {@code clientHeader}, each client's first failure at
	 * a place of its own among its first {@code n}. Counted over all requests, the
	 * failures of clients taking turns in a fixed order fall on the same few clients
	 * whenever {@code n} and the number of clients share a factor: a judge that leaves
	 * one client out would then see another failure rate than the one meant.
	 */
	void failEveryOfEachClient(int n, String clientHeader) {
		this.clientHeader = clientHeader;
		this.failEvery.set(n);
	}

	/**
	 * Breaks off every answer's body after its headers and the first 10 of 100 bytes,
	 * closing the connection.
	 */
	void cutBodies() {
		this.cutBodies = true;
	}

	void delay(Duration delay) {
		this.delayMillis.set(delay.toMillis());
	}

	/**
	 * Draws every answer's delay, in milliseconds, from {@code millis} (called once per
	 * request, from the server's event loops); {@code null} goes back to the fixed delay.
	 */
	void delays(@Nullable LongSupplier millis) {
		this.delays = millis;
	}

	/**
	 * Holds the requests {@code draws} says to hold (called once per request, from the
	 * server's event loops), as well as those that ask, until {@link #release()};
	 * {@code null} draws none.
	 */
	void holdWhen(@Nullable BooleanSupplier draws) {
		this.holdDraws = draws;
	}

	/**
	 * Holds every request from now on, until {@link #release()}.
	 */
	void hold() {
		this.holding = Holding.ALL;
	}

	/**
	 * Lets every request held so far go on to its answer, and holds none from now on,
	 * whether it asks or not, until {@link #hold()}: a request that waited elsewhere
	 * while the test held the others (for a connection, say) is not held in its turn.
	 */
	void release() {
		this.holding = Holding.NONE;
		Sinks.Empty<Void> released = this.gate;
		this.gate = Sinks.empty();
		released.tryEmitEmpty();
	}

	/**
	 * Returns the requests held now: arrived, neither released nor given up by their
	 * caller.
	 */
	int held() {
		return this.held.get();
	}

	int requests() {
		return this.requests.get();
	}

	/**
	 * Returns the requests served with one method since the last reset.
	 */
	int requests(String method) {
		AtomicInteger count = this.requestsByMethod.get(method);
		return (count != null) ? count.get() : 0;
	}

	/**
	 * Returns the requests whose caller went away before their answer, since the last
	 * reset.
	 */
	int cancelled() {
		return this.cancelled.get();
	}

	/**
	 * Returns whether any request this backend served carried the header.
	 */
	boolean sawHeader(String name) {
		return this.headerNames.contains(name.toLowerCase(Locale.ROOT));
	}

	void reset() {
		this.requests.set(0);
		this.requestsByMethod.clear();
		this.cancelled.set(0);
		this.maxActive.set(0);
	}

	/**
	 * Returns the requests this backend holds now.
	 */
	int active() {
		return this.active.get();
	}

	/**
	 * Returns the most requests this backend held at once since the last reset.
	 */
	int maxActive() {
		return this.maxActive.get();
	}

	/**
	 * Returns the most connections open to this backend at once since the last
	 * {@link #resetConnections()}.
	 */
	int maxConnections() {
		return this.maxConnections.get();
	}

	/**
	 * Starts counting the most connections open at once afresh, from those open now.
	 */
	void resetConnections() {
		this.maxConnections.set(this.connections.get());
	}

	@Override
	public void close() {
		this.server.disposeNow();
	}

	private enum Holding {

		ASKING, ALL, NONE

	}

}
