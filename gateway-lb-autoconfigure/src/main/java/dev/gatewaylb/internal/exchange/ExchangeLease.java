package dev.gatewaylb.internal.exchange;

import dev.gatewaylb.gateway.filter.InFlightReleaseFilter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import dev.gatewaylb.internal.feature.AnswerWatcher;
import io.netty.channel.EventLoop;
import io.netty.util.internal.ThreadExecutorMap;
import org.jspecify.annotations.Nullable;

/**
 * One exchange's release guard: it holds the in-flight claim of the exchange's current
 * attempt until the whole exchange is over (body written, error, or client gone), and
 * knows whether the client went away. {@link InFlightReleaseFilter} opens it before the
 * gateway writes the body and closes it after; {@link ProxiedExchange} hands it each
 * attempt it makes.
 * <p>
 * Thread-safe without a lock: the current attempt lives in one field updated by
 * compare-and-set, and a closed lease releases any attempt handed to it at once, so a
 * pick that races a cancellation cannot leak its claim. Releasing is idempotent
 * ({@link Attempt#release()}), so the attempt ending its own claim when its connection is
 * done and the lease releasing it again when the exchange ends count once.
 */
public final class ExchangeLease {

	/**
	 * The exchange attribute holding the lease.
	 */
	public static final String ATTRIBUTE = ExchangeLease.class.getName();

	private static final Object CLOSED = new Object();

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
	 * Creates the lease of an exchange, on the thread that runs it.
	 */
	public ExchangeLease() {
		// The filter that makes the lease runs on the exchange's event loop.
		this.eventLoop = (ThreadExecutorMap.currentExecutor() instanceof EventLoop loop) ? loop : null;
	}

	/**
	 * Returns the event loop the exchange runs on, or {@code null}.
	 * @return the loop
	 */
	@Nullable EventLoop eventLoop() {
		return this.eventLoop;
	}

	/**
	 * The current attempt, or {@link #CLOSED}; accessed through {@link #CURRENT}, a field
	 * rather than an {@code AtomicReference} so that a lease is one small object.
	 */
	/**
	 * The event loop the exchange runs on (the client's connection's), where every
	 * attempt of it prefers its upstream connection; {@code null} off the event loops.
	 */
	private final @Nullable EventLoop eventLoop;

	@SuppressWarnings("unused")
	private volatile @Nullable Object current;

	private volatile boolean clientGone;

	/**
	 * Who watches the exchange's answer as it is written, and is told when the exchange
	 * ends; {@code null} for nobody.
	 */
	private volatile @Nullable AnswerWatcher watcher;

	/**
	 * Makes {@code attempt} the one whose claim the lease holds, releasing the claim of
	 * the one it replaces; a closed lease releases it at once.
	 * @param attempt the attempt
	 */
	void hold(Attempt attempt) {
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
	 * Lets an attempt's claim outlive the exchange: a WebSocket session, which goes on
	 * after the exchange ended with the handshake, holds its endpoint until it closes,
	 * and releases the claim itself then. The lease releases it no more.
	 * @param attempt the attempt the lease holds
	 * @return whether handed over; {@code false} when the lease no longer holds it (the
	 * exchange ended, the claim is released)
	 */
	boolean handOver(Attempt attempt) {
		return CURRENT.compareAndSet(this, attempt, null);
	}

	/**
	 * Returns the attempt whose claim the lease holds.
	 * @return the attempt, or {@code null} before the first pick and after close
	 */
	@Nullable Attempt current() {
		return (this.current instanceof Attempt attempt) ? attempt : null;
	}

	/**
	 * Notes that the client went away: what the endpoint does from now on is not its
	 * doing, and is charged to nobody. Called before the cancellation reaches the
	 * upstream connection.
	 */
	public void clientGone() {
		this.clientGone = true;
	}

	/**
	 * Returns whether the client went away.
	 * @return whether gone
	 */
	boolean isClientGone() {
		return this.clientGone;
	}

	/**
	 * Makes a watcher see the exchange's answer as it is written, and the exchange's end.
	 * @param watcher the watcher
	 */
	void watch(AnswerWatcher watcher) {
		this.watcher = watcher;
		if (this.current == CLOSED) {
			// The exchange ended while the watcher was being made (a first request that
			// waited for its service, then a client gone): close() missed it.
			watcher.exchangeEnded();
		}
	}

	/**
	 * Returns who watches the exchange's answer.
	 * @return the watcher, or {@code null}
	 */
	@Nullable AnswerWatcher watcher() {
		return this.watcher;
	}

	/**
	 * Releases the current attempt's claim and any handed over later, and tells the
	 * exchange's watcher that the exchange ended; idempotent.
	 */
	public void close() {
		if (CURRENT.getAndSet(this, CLOSED) instanceof Attempt last) {
			last.release();
		}
		AnswerWatcher watcher = this.watcher;
		if (watcher != null) {
			watcher.exchangeEnded();
		}
	}

}
