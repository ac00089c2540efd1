package dev.gatewaylb.internal.upstream;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.control.RequestClock;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquirePendingLimitException;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquireTimeoutException;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Connections grouped by event loop, on real sockets over loopback: a request gets a
 * connection of its own loop, the cap holds over all loops, a request waiting on one loop
 * gets a connection released on another, and the queue keeps its bound and its time-out
 * (driven by a manual clock).
 */
class LoopLocalConnectionProviderTests {

	private static final int LOOPS = 4;

	private static final String USED = "test.used";

	private LoopResources clientLoops;

	private LoopResources serverLoops;

	private DisposableServer server;

	/**
	 * Connections open to the server now, and the most at once.
	 */
	private final AtomicInteger open = new AtomicInteger();

	private final AtomicInteger maxOpen = new AtomicInteger();

	/**
	 * Requests the server holds until the test lets them go (path /hold).
	 */
	private final Sinks.Empty<Void> release = Sinks.empty();

	private final AtomicInteger held = new AtomicInteger();

	private final ManualClock clock = new ManualClock();

	private final List<LoopLocalConnectionProvider.Endpoint> endpoints = new CopyOnWriteArrayList<>();

	private LoopLocalConnectionProvider provider;

	private HttpClient client;

	private EventLoops loops;

	@BeforeEach
	void start() {
		this.clientLoops = LoopResources.create("loop-local-test", LOOPS, true);
		this.serverLoops = LoopResources.create("loop-local-server", 1, true);
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.runOn(this.serverLoops)
			// Once per accepted socket (doOnConnection is once per request).
			.doOnChannelInit((observer, channel, remote) -> {
				this.maxOpen.accumulateAndGet(this.open.incrementAndGet(), Math::max);
				channel.closeFuture().addListener((closed) -> this.open.decrementAndGet());
			})
			.route((routes) -> routes.get("/hold", (request, response) -> {
				this.held.incrementAndGet();
				return response.sendString(this.release.asMono().then(Mono.fromCallable(() -> {
					this.held.decrementAndGet();
					return "released";
				})));
			}).get("/", (request, response) -> response.sendString(Mono.just("ok"))))
			.bindNow();
	}

	@AfterEach
	void stop() {
		if (this.provider != null) {
			this.provider.disposeLater().block(Duration.ofSeconds(10));
		}
		this.server.disposeNow();
		// No quiet period: nothing of the test runs on them any more.
		this.clientLoops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
		this.serverLoops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
	}

	private void provider(int maxConnections, int maxPending, Duration pendingTimeout) {
		provider(maxConnections, maxPending, pendingTimeout, Duration.ofSeconds(30));
	}

	private void provider(int maxConnections, int maxPending, Duration pendingTimeout, Duration maxIdleTime) {
		HttpClient template = HttpClient.create(ConnectionProvider.newConnection()).runOn(this.clientLoops);
		this.loops = EventLoops
			.of(template.configuration().loopResources().onClient(template.configuration().isPreferNative()));
		assertThat(this.loops.size()).as("the client's loops").isEqualTo(LOOPS);
		this.provider = new LoopLocalConnectionProvider("test", maxConnections, maxPending, pendingTimeout, maxIdleTime,
				this.loops, this.clock, this.endpoints::add, (endpoint, id) -> {
				});
		// One client for every request (a hook per request would change the pools' key),
		// telling each request's context which loop its connection lives on.
		this.client = HttpClient.create(this.provider)
			.runOn(this.clientLoops)
			.baseUrl("http://127.0.0.1:" + this.server.port())
			.doOnRequest((request, connection) -> request.currentContextView()
				.<Map<String, EventLoop>>get(USED)
				.put("loop", connection.channel().eventLoop()));
	}

	/**
	 * Sends one GET, subscribed on a loop of the client, and returns the body with the
	 * loop the connection it used lives on.
	 */
	private Mono<Sent> send(int loop, String path) {
		Scheduler scheduler = Schedulers.fromExecutor(this.loops.get(loop));
		return Mono.defer(() -> {
			Map<String, EventLoop> used = new ConcurrentHashMap<>();
			return this.client.get()
				.uri(path)
				.responseSingle((response, body) -> body.asString()
					.map((text) -> new Sent(response.status().code(), text, used.get("loop"))))
				.contextWrite((context) -> context.put(USED, used));
		}).subscribeOn(scheduler);
	}

	/**
	 * Sends one GET naming the exchange's loop in its context, subscribed on the test's
	 * thread or on another loop.
	 */
	private Mono<Sent> sendNaming(int named, int onLoop) {
		Mono<Sent> sent = Mono.defer(() -> {
			Map<String, EventLoop> used = new ConcurrentHashMap<>();
			return this.client.get()
				.uri("/")
				.responseSingle((response, body) -> body.asString()
					.map((text) -> new Sent(response.status().code(), text, used.get("loop"))))
				.contextWrite(
						(context) -> context.put(USED, used).put(Upstreams.CALLER_EVENT_LOOP, this.loops.get(named)));
		});
		return (onLoop == EventLoops.NONE) ? sent : sent.subscribeOn(Schedulers.fromExecutor(this.loops.get(onLoop)));
	}

	private LoopLocalConnectionProvider.Endpoint endpoint() {
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.endpoints.isEmpty());
		return this.endpoints.get(0);
	}

	@Test
	void aRequestOnALoopUsesAConnectionOfThatLoop() {
		provider(8, 16, Duration.ofSeconds(5));
		for (int loop = 0; loop < LOOPS; loop++) {
			for (int i = 0; i < 10; i++) {
				Sent sent = send(loop, "/").block(Duration.ofSeconds(10));
				assertThat(sent.status()).isEqualTo(200);
				assertThat(sent.loop()).as("the connection's loop, request %d from loop %d", i, loop)
					.isSameAs(this.loops.get(loop));
				// Back in its pool (released just after the answer is read) before the
				// next request asks.
				await().atMost(Duration.ofSeconds(5)).until(() -> endpoint().acquiredSize() == 0);
			}
		}
		LoopLocalConnectionProvider.Endpoint endpoint = endpoint();
		assertThat(endpoint.borrowed()).as("connections borrowed from another loop").isZero();
		assertThat(endpoint.allocatedSize()).as("one connection per loop").isEqualTo(LOOPS);
		assertThat(this.maxOpen).as("connections the server saw").hasValue(LOOPS);
	}

	@Test
	void aRequestNamingItsExchangesLoopUsesAConnectionOfThatLoopWhateverThreadSendsIt() {
		provider(8, 16, Duration.ofSeconds(5));
		for (int named = 0; named < LOOPS; named++) {
			Sent offTheLoops = sendNaming(named, EventLoops.NONE).block(Duration.ofSeconds(10));
			assertThat(offTheLoops.loop()).as("sent from the test's thread, naming loop %d", named)
				.isSameAs(this.loops.get(named));
			// Its connection back in the pool (released just after the answer is read)
			// before the next asks for it.
			await().atMost(Duration.ofSeconds(5)).until(() -> endpoint().acquiredSize() == 0);
			int other = (named + 1) % LOOPS;
			Sent fromAnotherLoop = sendNaming(named, other).block(Duration.ofSeconds(10));
			assertThat(fromAnotherLoop.loop()).as("sent from loop %d, naming loop %d", other, named)
				.isSameAs(this.loops.get(named));
			await().atMost(Duration.ofSeconds(5)).until(() -> endpoint().acquiredSize() == 0);
		}
		assertThat(endpoint().allocatedSize()).as("one connection per loop").isEqualTo(LOOPS);
	}

	@Test
	void theCapHoldsOverAllLoopsAndEveryRequestIsServed() {
		provider(4, 256, Duration.ofSeconds(30));
		// 64 clients, 16 per loop, 20 requests each, as fast as the four connections go.
		List<Sent> answers = Flux.range(0, 64)
			.flatMap((client) -> Flux.range(0, 20).concatMap((i) -> send(client % LOOPS, "/")), 64)
			.collectList()
			.block(Duration.ofSeconds(60));
		assertThat(answers).hasSize(64 * 20).allSatisfy((sent) -> assertThat(sent.status()).isEqualTo(200));
		assertThat(this.maxOpen.get()).as("connections open to the server at once").isBetween(1, 4);
		LoopLocalConnectionProvider.Endpoint endpoint = endpoint();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(endpoint.acquiredSize()).as("in use after the storm").isZero());
		assertThat(endpoint.pendingAcquireSize()).as("waiting after the storm").isZero();
		assertThat(endpoint.allocatedSize()).as("connections kept").isBetween(1, 4);
		assertThat(endpoint.idleSize()).isEqualTo(endpoint.allocatedSize());
	}

	@Test
	void aRequestWaitingOnOneLoopGetsTheConnectionReleasedOnAnother() {
		provider(1, 4, Duration.ofSeconds(30));
		Mono<Sent> first = send(0, "/hold").cache();
		first.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> this.held.get() == 1);
		Mono<Sent> second = send(1, "/").cache();
		second.subscribe();
		LoopLocalConnectionProvider.Endpoint endpoint = endpoint();
		await().atMost(Duration.ofSeconds(5)).until(() -> endpoint.pendingAcquireSize() == 1);
		assertThat(endpoint.allocatedSize()).as("the cap").isEqualTo(1);

		this.release.tryEmitEmpty();
		assertThat(first.block(Duration.ofSeconds(10)).status()).isEqualTo(200);
		Sent waited = second.block(Duration.ofSeconds(10));
		assertThat(waited.status()).isEqualTo(200);
		assertThat(waited.loop()).as("the one connection, on loop 0").isSameAs(this.loops.get(0));
		assertThat(endpoint.borrowed()).as("borrowed by loop 1").isEqualTo(1);
		assertThat(endpoint.pendingAcquireSize()).isZero();
		assertThat(this.maxOpen).hasValue(1);
	}

	@Test
	void theQueueIsBoundedAndTimedByTheRequestClock() {
		provider(1, 1, Duration.ofMillis(300));
		Mono<Sent> first = send(0, "/hold").cache();
		first.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> this.held.get() == 1);
		Mono<Sent> waiting = send(1, "/").cache();
		waiting.subscribe((sent) -> {
		}, (error) -> {
		});
		LoopLocalConnectionProvider.Endpoint endpoint = endpoint();
		await().atMost(Duration.ofSeconds(5)).until(() -> endpoint.pendingAcquireSize() == 1);

		assertThat(send(2, "/").map(Object.class::cast).onErrorResume(Mono::just).block(Duration.ofSeconds(10)))
			.as("one past max-pending, at once")
			.isInstanceOf(PoolAcquirePendingLimitException.class);

		this.clock.advance(Duration.ofMillis(299));
		assertThat(endpoint.pendingAcquireSize()).as("still waiting at 299 ms").isEqualTo(1);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(waiting.map(Object.class::cast).onErrorResume(Mono::just).block(Duration.ofSeconds(10)))
			.as("the wait, at 300 ms")
			.isInstanceOf(PoolAcquireTimeoutException.class);
		assertThat(endpoint.pendingAcquireSize()).isZero();

		this.release.tryEmitEmpty();
		assertThat(first.block(Duration.ofSeconds(10)).status()).isEqualTo(200);
		assertThat(this.maxOpen).hasValue(1);
	}

	@Test
	void idleConnectionsOfEveryLoopCloseAfterTheIdleTimeWithNoFurtherRequest() {
		provider(8, 16, Duration.ofSeconds(5), Duration.ofMillis(200));
		for (int loop = 0; loop < LOOPS; loop++) {
			assertThat(send(loop, "/").block(Duration.ofSeconds(10)).status()).isEqualTo(200);
		}
		LoopLocalConnectionProvider.Endpoint endpoint = endpoint();
		assertThat(endpoint.allocatedSize()).as("one connection per loop").isEqualTo(LOOPS);
		// No request follows: only the pools' own sweep can close them.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.open.get() == 0);
		await().atMost(Duration.ofSeconds(5)).until(() -> endpoint.allocatedSize() == 0);
		assertThat(endpoint.idleSize()).isZero();
	}

	@Test
	void theSweepRunsAtHalfTheIdleTimeAndNeverBelowATenthOfASecond() {
		assertThat(LoopLocalConnectionProvider.evictionInterval(Duration.ofSeconds(30)))
			.isEqualTo(Duration.ofSeconds(15));
		assertThat(LoopLocalConnectionProvider.evictionInterval(Duration.ofMillis(150)))
			.isEqualTo(Duration.ofMillis(100));
	}

	record Sent(int status, String body, EventLoop loop) {
	}

	/**
	 * A request clock whose timers run, on the test's thread, when the test moves it past
	 * them; scheduled from any thread.
	 */
	static final class ManualClock implements RequestClock {

		private final List<Task> tasks = new ArrayList<>();

		private long now;

		void advance(Duration by) {
			List<Task> due = new ArrayList<>();
			synchronized (this) {
				this.now += by.toNanos();
				this.tasks.removeIf((task) -> {
					if (task.due <= this.now) {
						due.add(task);
						return true;
					}
					return false;
				});
			}
			due.forEach((task) -> {
				if (!task.cancelled) {
					task.run.run();
				}
			});
		}

		@Override
		public synchronized long nanoTime() {
			return this.now;
		}

		@Override
		public synchronized long currentTimeMillis() {
			return this.now / 1_000_000;
		}

		@Override
		public synchronized Timer schedule(Runnable run, long delay, TimeUnit unit) {
			Task task = new Task(this.now + unit.toNanos(delay), run);
			this.tasks.add(task);
			return () -> task.cancelled = true;
		}

		static final class Task {

			final long due;

			final Runnable run;

			volatile boolean cancelled;

			Task(long due, Runnable run) {
				this.due = due;
				this.run = run;
			}

		}

	}

}
