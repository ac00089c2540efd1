package dev.gatewaylb.internal.overload;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.RequestClock;
import dev.gatewaylb.internal.overload.core.Partitions;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;

/**
 * One exchange's admission to a service whose endpoints have concurrency limits: which
 * picks may take a place ({@link #admit}, the partitions' shares), and what a request
 * that found every endpoint at its limit does: shed at once, or wait for a place
 * ({@link #shedOrWait}, {@code concurrency.max-wait}). A service without limits shares
 * {@link #NONE}, which admits every pick.
 * <p>
 * Not thread-safe: an exchange calls it one step at a time; what a wait shares with the
 * threads that wake it goes through the partitions' queues, lock-free.
 */
public class Admission {

	/**
	 * The admission of every exchange of a service without limits: every pick is
	 * admitted.
	 */
	public static final Admission NONE = new Admission();

	private Admission() {
	}

	/**
	 * Returns the admission of an exchange of a service.
	 * @param state the service's overload protection
	 * @return a new admission, or {@link #NONE} when the service limits nothing
	 */
	public static Admission of(OverloadState state) {
		return state.limits() ? new Limited(state) : NONE;
	}

	/**
	 * Returns whether picks are admitted by partition ({@code concurrency.partition-by}),
	 * so that the exchange reads the request's partition name.
	 * @return whether partitioned
	 */
	public boolean partitioned() {
		return false;
	}

	/**
	 * Admits a pick: an endpoint at its limit is never picked, but a partition under its
	 * share goes over the limit when every endpoint is at it, and one past its share is
	 * held back while another needs the place.
	 * @param snapshot the service's endpoints
	 * @param index the endpoint the algorithm picked, or {@link Snapshot#AT_LIMIT} or -1
	 * @param key the consistent-hash key of the pick, or {@code null}
	 * @param partition the request's partition name, or {@code null}
	 * @param hedged whether the pick is a hedged round's, which never waits
	 * @return the endpoint to claim, or {@link Snapshot#AT_LIMIT} to shed, or -1
	 */
	public int admit(Snapshot<?> snapshot, int index, @Nullable CharSequence key, @Nullable CharSequence partition,
			boolean hedged) {
		return index;
	}

	/**
	 * Returns the partition the last admitted pick counts in, which its claim releases.
	 * @return the partition, or -1
	 */
	public int partition() {
		return -1;
	}

	/**
	 * Returns whether the last pick found every endpoint at its limit.
	 * @return whether shed
	 */
	public boolean shed() {
		return false;
	}

	/**
	 * Notes that a pick took a place: a retry that finds none later waits afresh.
	 */
	public void picked() {
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
	 * passes a wake it got on to the next waiter.
	 * @param request the request, whose connection's event loop the pick after a wait
	 * runs on
	 * @param client the client's address as resolved through the trusted proxies, or
	 * {@code null}: at most {@code concurrency.max-wait-per-client} of the wait queue is
	 * one client's (an IPv6 address by its /64, which one host or home may fill)
	 * @param clock the request clock, whose timer is the deadline
	 * @param pickAgain the exchange's next pick
	 * @param shed the exchange's answer to a shed request
	 * @return what the exchange does
	 */
	public Mono<Void> shedOrWait(ServerHttpRequest request, @Nullable InetAddress client, RequestClock clock,
			Supplier<Mono<Void>> pickAgain, Supplier<Mono<Void>> shed) {
		return shed.get();
	}

	/**
	 * Returns the key a client's waiters are counted by: its address, an IPv6 one's /64
	 * (a host may take any address of its prefix). No DNS query: an address from bytes.
	 */
	static @Nullable Object clientKey(@Nullable InetAddress client) {
		if (client instanceof Inet6Address) {
			byte[] bytes = client.getAddress();
			java.util.Arrays.fill(bytes, 8, 16, (byte) 0);
			try {
				return InetAddress.getByAddress(bytes);
			}
			catch (UnknownHostException ex) {
				// Sixteen bytes are always an address.
				throw new IllegalStateException(ex);
			}
		}
		return client;
	}

	/**
	 * Returns the event loop of a request's connection, or a direct executor for a
	 * request that is not Reactor Netty's (a test's).
	 */
	static Executor eventLoopOf(ServerHttpRequest request) {
		try {
			Object inbound = ServerHttpRequestDecorator.getNativeRequest(request);
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
	 * The admission of an exchange of a limited service.
	 */
	private static final class Limited extends Admission {

		private static final RequestClock.Timer DISPOSED = () -> {
		};

		private final OverloadState state;

		private int partition = -1;

		private boolean shed;

		/**
		 * The partition of the request the last pick shed, -1 for a service not
		 * partitioned.
		 */
		private int shedPartition = -1;

		/**
		 * When a request waiting for a place is shed; set at its first wait, so that
		 * waits after a lost race share one deadline.
		 */
		private long waitDeadlineNanos;

		private boolean waited;

		Limited(OverloadState state) {
			this.state = state;
		}

		@Override
		public boolean partitioned() {
			return this.state.settings().partitioned();
		}

		@Override
		public int admit(Snapshot<?> snapshot, int index, @Nullable CharSequence key, @Nullable CharSequence name,
				boolean hedged) {
			int partition = -1;
			if (partitioned()) {
				Partitions partitions = this.state.partitions();
				partition = partitions.indexOf(name);
				if (partitions.underShare(partition)
						|| (index == Snapshot.AT_LIMIT && partitions.hasSpare(partition))) {
					if (index == Snapshot.AT_LIMIT) {
						// Every endpoint is at its limit, but the partition has not had
						// its
						// share of the service's limit, or another is further past its
						// own: it goes over, and the partitions furthest past their
						// shares
						// are the ones shed.
						index = snapshot.selectOverLimit(key);
					}
				}
				else if (index >= 0
						&& (!partitions.hasSpare(partition) || (!hedged && !this.waited && partitions.waiting() > 0))) {
					// Past its share, the service at its limit, and no other partition
					// further past its own: this one is shed first. Or requests wait for
					// a
					// place (concurrency.max-wait): one past its share does not take the
					// place a request that ended freed for them; it waits behind them. A
					// hedged round's pick cannot wait: not held back.
					index = Snapshot.AT_LIMIT;
				}
				if (index >= 0) {
					partitions.acquire(partition);
				}
				else if (index == Snapshot.AT_LIMIT) {
					partitions.refused(partition);
				}
			}
			this.partition = (index >= 0) ? partition : -1;
			this.shedPartition = partition;
			this.shed = index == Snapshot.AT_LIMIT;
			return index;
		}

		@Override
		public int partition() {
			return this.partition;
		}

		@Override
		public boolean shed() {
			return this.shed;
		}

		@Override
		public void picked() {
			this.waited = false;
		}

		@Override
		public Mono<Void> shedOrWait(ServerHttpRequest request, @Nullable InetAddress client, RequestClock clock,
				Supplier<Mono<Void>> pickAgain, Supplier<Mono<Void>> shed) {
			long maxWait = this.state.settings().maxWait().toNanos();
			if (maxWait == 0) {
				return shed.get();
			}
			long now = clock.nanoTime();
			boolean again = this.waited;
			if (!again) {
				this.waited = true;
				this.waitDeadlineNanos = now + maxWait;
			}
			long remaining = this.waitDeadlineNanos - now;
			if (remaining <= 0) {
				return shed.get();
			}
			Partitions partitions = this.state.partitions();
			Executor loop = eventLoopOf(request);
			int queue = (this.shedPartition >= 0) ? this.shedPartition : partitions.indexOf(null);
			// A woken waiter is handed over once: by its pick, or, when its client left
			// before the wake arrived, by the cancellation, which passes the wake on.
			AtomicBoolean handedOver = new AtomicBoolean();
			Object clientKey = clientKey(client);
			double perClient = this.state.settings().maxWaitPerClient();
			return Mono.<Boolean>create((sink) -> {
				Partitions.Waiter waiter = partitions.await(queue, again, clientKey, perClient,
						() -> onLoop(loop, () -> sink.success(true)));
				if (waiter == null) {
					sink.success(false);
					return;
				}
				// The deadline's timer, or DISPOSED once the wait is over: whichever of
				// the
				// two threads comes second cancels it.
				AtomicReference<RequestClock.@Nullable Timer> timer = new AtomicReference<>();
				// Runs after the woken pick on success (Mono.create emits, then
				// disposes),
				// or on a cancellation from any thread.
				sink.onDispose(() -> {
					RequestClock.Timer armed = timer.getAndSet(DISPOSED);
					if (armed != null) {
						armed.cancel();
					}
					if (!partitions.cancel(waiter) && waiter.woken() && handedOver.compareAndSet(false, true)) {
						partitions.handOverTaken();
						partitions.wakeOne();
					}
				});
				// The deadline, on the request's own event loop too: the exchange stays
				// confined to it. The pick it makes is the waiter's last.
				RequestClock.Timer deadline = clock.schedule(() -> {
					if (partitions.cancel(waiter)) {
						onLoop(loop, () -> sink.success(false));
					}
				}, remaining, TimeUnit.NANOSECONDS);
				if (!timer.compareAndSet(null, deadline)) {
					deadline.cancel();
				}
			}).flatMap((woken) -> {
				if (!woken) {
					// The deadline's pick: sent if a place is free, shed otherwise.
					this.waitDeadlineNanos = clock.nanoTime();
					return pickAgain.get();
				}
				try {
					return pickAgain.get();
				}
				finally {
					// Through its pick: a place taken or the queue rejoined.
					if (handedOver.compareAndSet(false, true)) {
						partitions.handOverTaken();
					}
				}
			});
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

	}

}
