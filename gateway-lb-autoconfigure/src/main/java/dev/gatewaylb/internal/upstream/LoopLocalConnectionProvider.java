package dev.gatewaylb.internal.upstream;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.gatewaylb.internal.control.RequestClock;
import io.netty.channel.EventLoop;
import io.netty.resolver.AddressResolverGroup;
import io.netty.util.concurrent.FastThreadLocal;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.netty.Connection;
import reactor.netty.ConnectionObserver;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquirePendingLimitException;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquireTimeoutException;
import reactor.netty.internal.shaded.reactor.pool.PoolShutdownException;
import reactor.netty.resources.ConnectionPoolMetrics;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.transport.TransportConfig;
import reactor.util.context.Context;

/**
 * A service's connections grouped by event loop ({@code pool.loop-affinity: preferred}):
 * a request takes an idle connection of its own loop, else opens one there, else (the
 * endpoint's cap reached) borrows an idle connection of another loop, else waits. So the
 * upstream connection and the client's connection share a loop and no write is handed to
 * another one.
 * <p>
 * Built from Reactor Netty's own pools: one provider per event loop, whose pools never
 * queue ({@code pendingAcquireMaxCount(0)}: no idle connection and no permit is an
 * immediate refusal), and whose per-endpoint pools share one permit count
 * ({@link Permits}, the allocation strategy Reactor Netty copies for every pool it
 * creates). The cap of an endpoint is that count: {@code max-connections} over all loops,
 * never exceeded whichever loop asks. Waiting is this class's: one bounded queue per
 * endpoint ({@code max-pending}, {@code pending-timeout} on the request clock), served
 * whenever a connection of the endpoint goes back to any loop's pool or a permit is
 * returned, so a request waits only while every connection of the endpoint is in use, as
 * with one pool.
 * <p>
 * Pool meters and the actuator see one pool per endpoint ({@link Endpoint}: the sum over
 * loops), plus how many connections were borrowed from another loop.
 */
final class LoopLocalConnectionProvider implements ConnectionProvider {

	/**
	 * The context key of the loop a request belongs on
	 * ({@link Upstreams#CALLER_EVENT_LOOP}).
	 */
	static final String CALLER_EVENT_LOOP = Upstreams.CALLER_EVENT_LOOP;

	/**
	 * The endpoint whose pool Reactor Netty may be creating on this thread: set around
	 * each subscription to a loop's provider, read by {@link Permits#copy()}, which
	 * Reactor Netty calls while it creates the pool, on the subscribing thread.
	 */
	private static final FastThreadLocal<Endpoint> ACQUIRING = new FastThreadLocal<>();

	private static final Duration MIN_EVICTION_INTERVAL = Duration.ofMillis(100);

	private final String name;

	private final int maxConnections;

	private final int maxPending;

	private final Duration pendingTimeout;

	private final RequestClock clock;

	private final EventLoops loops;

	private final ConnectionProvider[] perLoop;

	private final Map<SocketAddress, Endpoint> endpoints = new ConcurrentHashMap<>();

	private final AtomicInteger ids = new AtomicInteger();

	/**
	 * Round-robin over the loops for a caller that runs none and names none.
	 */
	private final AtomicInteger offLoop = new AtomicInteger();

	private final Consumer<Endpoint> opened;

	private final BiConsumer<Endpoint, String> closed;

	/**
	 * Builds the providers of every loop. Allocates: call it off the event loops.
	 * @param name the provider's name, as meters show it
	 * @param maxConnections the cap of each endpoint over all loops
	 * @param maxPending most requests waiting for a connection of one endpoint
	 * @param pendingTimeout longest wait, zero for none
	 * @param maxIdleTime how long an idle connection is kept, on whichever loop
	 * @param loops the loops the service's client runs on
	 * @param clock the clock of the pending timeouts
	 * @param opened told (on the event loop of the first request) when an endpoint gets
	 * its pools
	 * @param closed told when an endpoint's pools close, with the endpoint's id
	 */
	LoopLocalConnectionProvider(String name, int maxConnections, int maxPending, Duration pendingTimeout,
			Duration maxIdleTime, EventLoops loops, RequestClock clock, Consumer<Endpoint> opened,
			BiConsumer<Endpoint, String> closed) {
		this.name = name;
		this.maxConnections = maxConnections;
		this.maxPending = maxPending;
		this.pendingTimeout = pendingTimeout;
		this.clock = clock;
		this.loops = loops;
		this.opened = opened;
		this.closed = closed;
		this.perLoop = new ConnectionProvider[loops.size()];
		for (int i = 0; i < this.perLoop.length; i++) {
			int loop = i;
			this.perLoop[i] = ConnectionProvider.builder(name + "-loop-" + i)
				.allocationStrategy(Permits.TEMPLATE)
				.pendingAcquireMaxCount(0)
				// No pending acquire, so no timer of the pool's own.
				.pendingAcquireTimeout(Duration.ZERO)
				.maxIdleTime(maxIdleTime)
				// A loop's pool is asked only by its own loop's requests: without a sweep
				// of its own, idle connections of a loop that gets no more requests would
				// stay open. Reactor Netty's maintenance thread sweeps (not an event
				// loop).
				.evictInBackground(evictionInterval(maxIdleTime))
				.metrics(true, () -> new LoopPools(loop))
				.build();
		}
	}

	/**
	 * Half the idle time (at least 100 ms): an idle connection closes between
	 * {@code max-idle-time} and one and a half times it.
	 */
	static Duration evictionInterval(Duration maxIdleTime) {
		Duration half = maxIdleTime.dividedBy(2);
		return (half.compareTo(MIN_EVICTION_INTERVAL) < 0) ? MIN_EVICTION_INTERVAL : half;
	}

	@Override
	public Mono<? extends Connection> acquire(TransportConfig config, ConnectionObserver observer,
			@Nullable Supplier<? extends SocketAddress> remoteAddress, @Nullable AddressResolverGroup<?> resolver) {
		if (remoteAddress == null) {
			return Mono.error(new IllegalArgumentException("remoteAddress"));
		}
		return Mono.create((sink) -> {
			SocketAddress address = remoteAddress.get();
			Endpoint endpoint = this.endpoints.get(address);
			if (endpoint == null) {
				endpoint = this.endpoints.computeIfAbsent(address, this::newEndpoint);
			}
			// The exchange's loop when the request names it (a retry after a wake-up on
			// another thread, say), else the caller's, else the loops in turn.
			Object named = sink.contextView().getOrDefault(CALLER_EVENT_LOOP, null);
			int home = (named instanceof EventLoop loop) ? this.loops.indexOf(loop) : EventLoops.NONE;
			if (home == EventLoops.NONE) {
				home = this.loops.current();
			}
			if (home == EventLoops.NONE && named != null) {
				// A loop of another group (the server's, when it does not share the
				// client's): always the same pools for it, so its connections are reused.
				home = Math.floorMod(System.identityHashCode(named), this.perLoop.length);
			}
			if (home == EventLoops.NONE) {
				home = Math.floorMod(this.offLoop.getAndIncrement(), this.perLoop.length);
			}
			new Acquisition(endpoint, home, config, observer, remoteAddress, resolver, sink).start();
		});
	}

	private Endpoint newEndpoint(SocketAddress address) {
		Endpoint endpoint = new Endpoint(address, Integer.toString(this.ids.incrementAndGet()));
		this.opened.accept(endpoint);
		return endpoint;
	}

	@Override
	public void disposeWhen(SocketAddress address) {
		for (ConnectionProvider provider : this.perLoop) {
			provider.disposeWhen(address);
		}
		// The address given is unresolved (host and port); Reactor Netty keys an IP
		// literal's pools by a resolved one: matched as Reactor Netty matches them.
		this.endpoints.entrySet().removeIf((entry) -> {
			if (sameEndpoint(entry.getKey(), address)) {
				entry.getValue().close();
				return true;
			}
			return false;
		});
	}

	static boolean sameEndpoint(SocketAddress pooled, SocketAddress given) {
		if (pooled.equals(given)) {
			return true;
		}
		return pooled instanceof InetSocketAddress a && given instanceof InetSocketAddress b
				&& a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
	}

	@Override
	public Mono<Void> disposeLater() {
		return Mono.defer(() -> {
			Mono<?>[] closing = new Mono<?>[this.perLoop.length];
			for (int i = 0; i < closing.length; i++) {
				closing[i] = this.perLoop[i].disposeLater();
			}
			this.endpoints.values().forEach(Endpoint::close);
			this.endpoints.clear();
			return Mono.when(closing);
		});
	}

	@Override
	public boolean isDisposed() {
		return this.perLoop.length > 0 && this.perLoop[0].isDisposed();
	}

	@Override
	public int maxConnections() {
		return this.maxConnections;
	}

	@Override
	public String name() {
		return this.name;
	}

	/**
	 * One endpoint over all loops: its permit count (the cap), each loop's pool, the
	 * requests waiting for any of them, and the pool figures the meters read (sums over
	 * the loops).
	 */
	final class Endpoint implements Upstreams.LoopLocalPool {

		private final SocketAddress address;

		private final String id;

		private final Permits permits = new Permits(this);

		/**
		 * Each loop's pool of this endpoint, set when Reactor Netty creates it.
		 */
		private final AtomicReferenceArray<ConnectionPoolMetrics> pools;

		private final ConcurrentLinkedDeque<Acquisition> waiters = new ConcurrentLinkedDeque<>();

		/**
		 * Requests that wait or are being served from the queue: bounded by
		 * {@code max-pending}.
		 */
		private final AtomicInteger waiting = new AtomicInteger();

		/**
		 * Serves the queue one thread at a time; an event during a round makes one more.
		 */
		private final AtomicInteger wip = new AtomicInteger();

		private final LongAdder borrowed = new LongAdder();

		private volatile boolean closed;

		Endpoint(SocketAddress address, String id) {
			this.address = address;
			this.id = id;
			this.pools = new AtomicReferenceArray<>(LoopLocalConnectionProvider.this.perLoop.length);
		}

		SocketAddress address() {
			return this.address;
		}

		String id() {
			return this.id;
		}

		String poolName() {
			return LoopLocalConnectionProvider.this.name;
		}

		@Override
		public long borrowed() {
			return this.borrowed.sum();
		}

		/**
		 * Returns the loop the next acquire of a waiting request should use: its own if
		 * that has an idle connection or a permit is free, else one with an idle
		 * connection, else {@link EventLoops#NONE}. An estimate: the acquire itself
		 * decides, and a refusal puts the request back at the head of the queue.
		 */
		int sourceFor(int home) {
			if (idle(home) > 0 || this.permits.estimatePermitCount() > 0) {
				return home;
			}
			return borrowable(home);
		}

		/**
		 * Returns another loop with an idle connection, or {@link EventLoops#NONE}.
		 */
		int borrowable(int home) {
			int loops = this.pools.length();
			for (int k = 1; k < loops; k++) {
				int loop = (home + k) % loops;
				if (idle(loop) > 0) {
					return loop;
				}
			}
			return EventLoops.NONE;
		}

		private int idle(int loop) {
			ConnectionPoolMetrics pool = this.pools.get(loop);
			return (pool != null) ? pool.idleSize() : 0;
		}

		/**
		 * Serves waiting requests while a source can serve them. Called on every release
		 * of a connection of the endpoint, every returned permit, and after a request
		 * joins the queue, so that a connection freed while it joined is not missed.
		 */
		void drain() {
			if (this.wip.getAndIncrement() != 0) {
				return;
			}
			int missed = 1;
			do {
				for (;;) {
					Acquisition head = this.waiters.peekFirst();
					if (head == null) {
						break;
					}
					if (head.isDone()) {
						this.waiters.remove(head);
						continue;
					}
					int source = sourceFor(head.home);
					if (source == EventLoops.NONE) {
						break;
					}
					if (this.waiters.remove(head) && head.claim()) {
						head.tryFrom(source);
					}
				}
				missed = this.wip.addAndGet(-missed);
			}
			while (missed != 0);
		}

		void enqueue(Acquisition acquisition) {
			if (this.waiting.incrementAndGet() > LoopLocalConnectionProvider.this.maxPending) {
				// Counted out again as it finishes.
				acquisition.fail(new PoolAcquirePendingLimitException(LoopLocalConnectionProvider.this.maxPending));
				return;
			}
			acquisition.armTimeout();
			this.waiters.offerLast(acquisition);
			drain();
		}

		void requeue(Acquisition acquisition) {
			this.waiters.offerFirst(acquisition);
			drain();
		}

		void left(Acquisition acquisition) {
			this.waiting.decrementAndGet();
			this.waiters.remove(acquisition);
		}

		void close() {
			if (this.closed) {
				return;
			}
			this.closed = true;
			for (Acquisition waiter; (waiter = this.waiters.pollFirst()) != null;) {
				waiter.fail(new PoolShutdownException());
			}
			LoopLocalConnectionProvider.this.closed.accept(this, this.id);
		}

		@Override
		public int acquiredSize() {
			int sum = 0;
			for (int i = 0; i < this.pools.length(); i++) {
				ConnectionPoolMetrics pool = this.pools.get(i);
				sum += (pool != null) ? pool.acquiredSize() : 0;
			}
			return sum;
		}

		@Override
		public int allocatedSize() {
			return this.permits.permitGranted();
		}

		@Override
		public int idleSize() {
			int sum = 0;
			for (int i = 0; i < this.pools.length(); i++) {
				sum += idle(i);
			}
			return sum;
		}

		@Override
		public int pendingAcquireSize() {
			return this.waiting.get();
		}

		@Override
		public int maxAllocatedSize() {
			return LoopLocalConnectionProvider.this.maxConnections;
		}

		@Override
		public int maxPendingAcquireSize() {
			return LoopLocalConnectionProvider.this.maxPending;
		}

	}

	/**
	 * One request's way to a connection: its own loop's pool, another loop's idle
	 * connection, the endpoint's queue. Also the observer of the connection it gets, to
	 * hear its release.
	 * <p>
	 * Concurrency: a queued acquisition is claimed by one drain ({@link #claim()}:
	 * WAITING to TRYING) before it is tried, and given back (TRYING to WAITING) only by
	 * that try's refusal; the result, the time-out and the client's cancel each end it at
	 * most once ({@link #finish()}: to DONE), so a request is answered once and leaves
	 * the queue's count once.
	 */
	final class Acquisition implements ConnectionObserver, CoreSubscriber<Connection>, Disposable {

		private static final int STARTING = 0;

		private static final int WAITING = 1;

		private static final int TRYING = 2;

		private static final int DONE = 3;

		private final Endpoint endpoint;

		private final int home;

		private final TransportConfig config;

		private final ConnectionObserver observer;

		private final Supplier<? extends SocketAddress> remoteAddress;

		private final @Nullable AddressResolverGroup<?> resolver;

		private final MonoSink<Connection> sink;

		private final AtomicInteger state = new AtomicInteger(STARTING);

		/**
		 * The loop whose pool the try in flight asks.
		 */
		private volatile int source;

		/**
		 * Whether it joined the endpoint's queue (and is counted there until done).
		 */
		private volatile boolean queued;

		private volatile @Nullable Subscription inner;

		private volatile RequestClock.Timer timeout = RequestClock.Timer.NONE;

		private volatile boolean timedOut;

		@SuppressWarnings("unchecked")
		Acquisition(Endpoint endpoint, int home, TransportConfig config, ConnectionObserver observer,
				Supplier<? extends SocketAddress> remoteAddress, @Nullable AddressResolverGroup<?> resolver,
				MonoSink<? super Connection> sink) {
			this.endpoint = endpoint;
			this.home = home;
			this.config = config;
			this.observer = observer;
			this.remoteAddress = remoteAddress;
			this.resolver = resolver;
			this.sink = (MonoSink<Connection>) sink;
		}

		void start() {
			this.sink.onCancel(this);
			tryFrom(this.home);
		}

		boolean isDone() {
			return this.state.get() == DONE;
		}

		boolean claim() {
			return this.state.compareAndSet(WAITING, TRYING);
		}

		private boolean finish() {
			for (;;) {
				int current = this.state.get();
				if (current == DONE) {
					return false;
				}
				if (this.state.compareAndSet(current, DONE)) {
					if (this.queued) {
						this.endpoint.left(this);
					}
					this.timeout.cancel();
					return true;
				}
			}
		}

		/**
		 * Asks one loop's pool: its idle connection, else a new connection on that loop
		 * if a permit is free; refused at once otherwise.
		 */
		void tryFrom(int loop) {
			this.source = loop;
			Endpoint previous = ACQUIRING.getIfExists();
			ACQUIRING.set(this.endpoint);
			try {
				LoopLocalConnectionProvider.this.perLoop[loop]
					.acquire(this.config, this, this.remoteAddress, this.resolver)
					.subscribe(this);
			}
			finally {
				ACQUIRING.set(previous);
			}
		}

		@Override
		public Context currentContext() {
			Context context = Context.of(this.sink.contextView());
			int loop = this.source;
			if (LoopLocalConnectionProvider.this.loops.current() != loop) {
				// A new connection belongs on the loop whose pool keeps it.
				context = context.put(CALLER_EVENT_LOOP, LoopLocalConnectionProvider.this.loops.get(loop));
			}
			return context;
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			this.inner = subscription;
			subscription.request(Long.MAX_VALUE);
		}

		@Override
		public void onNext(Connection connection) {
			if (this.source != this.home) {
				this.endpoint.borrowed.increment();
			}
			if (finish()) {
				this.sink.success(connection);
			}
			else {
				// Cancelled while the pool handed it over (rare): closing it returns its
				// permit.
				connection.dispose();
			}
		}

		@Override
		public void onError(Throwable error) {
			if (!(error instanceof PoolAcquirePendingLimitException)) {
				fail(error);
				return;
			}
			// The pool asked had no idle connection and no permit was free.
			if (this.queued) {
				if (this.timedOut) {
					fail(new PoolAcquireTimeoutException(LoopLocalConnectionProvider.this.pendingTimeout));
				}
				else if (this.state.compareAndSet(TRYING, WAITING)) {
					this.endpoint.requeue(this);
				}
				return;
			}
			int next = nextBorrowable();
			if (next != EventLoops.NONE) {
				tryFrom(next);
			}
			else if (this.state.compareAndSet(STARTING, WAITING)) {
				this.queued = true;
				this.endpoint.enqueue(this);
			}
		}

		/**
		 * Another loop with an idle connection after the one just refused, going round
		 * from the home loop once.
		 */
		private int nextBorrowable() {
			int loops = LoopLocalConnectionProvider.this.perLoop.length;
			for (int k = Math.floorMod(this.source - this.home, loops) + 1; k < loops; k++) {
				int loop = (this.home + k) % loops;
				if (this.endpoint.idle(loop) > 0) {
					return loop;
				}
			}
			return EventLoops.NONE;
		}

		@Override
		public void onComplete() {
		}

		void armTimeout() {
			Duration limit = LoopLocalConnectionProvider.this.pendingTimeout;
			if (!limit.isZero()) {
				this.timeout = LoopLocalConnectionProvider.this.clock.schedule(this::timedOut, limit.toNanos(),
						TimeUnit.NANOSECONDS);
			}
		}

		private void timedOut() {
			this.timedOut = true;
			// A try in flight decides by itself: a connection it gets is used.
			if (this.state.compareAndSet(WAITING, TRYING)) {
				fail(new PoolAcquireTimeoutException(LoopLocalConnectionProvider.this.pendingTimeout));
			}
		}

		void fail(Throwable error) {
			if (finish()) {
				this.sink.error(error);
			}
		}

		@Override
		public void dispose() {
			if (finish()) {
				Subscription subscription = this.inner;
				if (subscription != null) {
					subscription.cancel();
				}
			}
		}

		@Override
		public void onStateChange(Connection connection, State newState) {
			this.observer.onStateChange(connection, newState);
			if (newState == State.RELEASED && !this.endpoint.waiters.isEmpty()) {
				// Back in its loop's pool: a waiting request can have it.
				this.endpoint.drain();
			}
		}

		@Override
		public void onUncaughtException(Connection connection, Throwable error) {
			this.observer.onUncaughtException(connection, error);
		}

	}

	/**
	 * The permit count of one endpoint, shared by its pools on every loop: the allocation
	 * strategy of each loop's provider. Reactor Netty calls {@link #copy()} for each pool
	 * it creates, on the thread that subscribes to the acquire, inside the subscription:
	 * the copy is the permit count of the endpoint being acquired.
	 * <p>
	 * Concurrency: a grant is a compare-and-set below the cap, so pools on several loops
	 * granting at once never exceed it; a returned permit wakes the endpoint's queue.
	 */
	static final class Permits implements ConnectionProvider.AllocationStrategy<Permits> {

		/**
		 * What each loop's provider is configured with; only its copies grant.
		 */
		static final Permits TEMPLATE = new Permits(null);

		private final @Nullable Endpoint endpoint;

		private final AtomicInteger granted = new AtomicInteger();

		private Permits(@Nullable Endpoint endpoint) {
			this.endpoint = endpoint;
		}

		@Override
		public Permits copy() {
			Endpoint acquiring = ACQUIRING.getIfExists();
			if (acquiring == null) {
				throw new IllegalStateException("a pool was created outside of an acquire of gateway-lb");
			}
			return acquiring.permits;
		}

		private int cap() {
			return (this.endpoint != null) ? this.endpoint.maxAllocatedSize() : 0;
		}

		@Override
		public int estimatePermitCount() {
			return Math.max(0, cap() - this.granted.get());
		}

		@Override
		public int getPermits(int desired) {
			int cap = cap();
			for (;;) {
				int current = this.granted.get();
				int grant = Math.min(desired, cap - current);
				if (grant <= 0) {
					return 0;
				}
				if (this.granted.compareAndSet(current, current + grant)) {
					return grant;
				}
			}
		}

		@Override
		public int permitGranted() {
			return this.granted.get();
		}

		@Override
		public int permitMinimum() {
			return 0;
		}

		@Override
		public int permitMaximum() {
			return cap();
		}

		@Override
		public void returnPermits(int returned) {
			this.granted.addAndGet(-returned);
			if (this.endpoint != null && !this.endpoint.waiters.isEmpty()) {
				this.endpoint.drain();
			}
		}

	}

	/**
	 * Records each loop's pool of an endpoint as Reactor Netty creates it.
	 */
	private final class LoopPools implements ConnectionProvider.MeterRegistrar {

		private final int loop;

		LoopPools(int loop) {
			this.loop = loop;
		}

		@Override
		public void registerMetrics(String poolName, String id, SocketAddress remoteAddress,
				ConnectionPoolMetrics metrics) {
			Endpoint endpoint = LoopLocalConnectionProvider.this.endpoints.get(remoteAddress);
			if (endpoint != null) {
				endpoint.pools.set(this.loop, metrics);
			}
		}

		@Override
		public void deRegisterMetrics(String poolName, String id, SocketAddress remoteAddress) {
			// Nothing to forget: a closed pool counts no connection, and the pool of an
			// endpoint that comes back (same id) replaces it when it is created.
		}

	}

}
