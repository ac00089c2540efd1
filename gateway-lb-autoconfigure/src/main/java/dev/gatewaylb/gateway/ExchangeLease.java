package dev.gatewaylb.gateway;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import dev.gatewaylb.balance.InFlightGuard;
import org.jspecify.annotations.Nullable;

/**
 * The in-flight guard of one exchange's current attempt, kept in an exchange attribute
 * from the balancer's pick until the exchange ends.
 * <p>
 * The gateway's own load-balancer lifecycle ends a request when the upstream's headers
 * arrive and never on cancellation; this lease ends when {@link InFlightReleaseFilter}
 * sees the whole exchange finish: body written, error, or client gone. A retry's new pick
 * replaces the guard and releases the previous one.
 * <p>
 * Thread-safe without a lock: the current guard lives in one atomic reference, and a
 * closed lease releases any guard handed to it at once, so a pick that races a
 * cancellation cannot leak.
 */
public final class ExchangeLease {

	/**
	 * The exchange attribute holding the lease.
	 */
	public static final String ATTRIBUTE = ExchangeLease.class.getName();

	private static final Object CLOSED = new Object();

	private final @Nullable InetSocketAddress remoteAddress;

	private final AtomicReference<@Nullable Object> current = new AtomicReference<>();

	private volatile @Nullable String serviceId;

	/**
	 * The address of the first attempt, and of later ones (retries, rare) in a list made
	 * only when needed: the common exchange allocates nothing for this.
	 */
	private volatile @Nullable String firstTried;

	private volatile @Nullable List<String> laterTried;

	/**
	 * Creates a lease for an exchange from {@code remoteAddress}.
	 * @param remoteAddress the address of the connection's peer, or {@code null}
	 */
	public ExchangeLease(@Nullable InetSocketAddress remoteAddress) {
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
	 * Returns the service the current attempt was sent to.
	 * @return the service id, or {@code null} before the first pick
	 */
	public @Nullable String serviceId() {
		return this.serviceId;
	}

	/**
	 * Takes the guard of a new pick of a service, releasing the previous attempt's.
	 * @param serviceId the service picked from
	 * @param guard the new guard
	 */
	public void hold(String serviceId, InFlightGuard guard) {
		this.serviceId = serviceId;
		String address = guard.endpoint().address();
		if (this.firstTried == null) {
			this.firstTried = address;
		}
		else {
			List<String> later = this.laterTried;
			if (later == null) {
				later = new CopyOnWriteArrayList<>();
				this.laterTried = later;
			}
			later.add(address);
		}
		hold(guard);
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
	 * Returns how many attempts this exchange has made.
	 * @return the attempts
	 */
	public int attempts() {
		List<String> later = this.laterTried;
		return ((this.firstTried != null) ? 1 : 0) + ((later != null) ? later.size() : 0);
	}

	/**
	 * Takes the guard of a new pick, releasing the previous attempt's.
	 * @param guard the new guard
	 */
	public void hold(InFlightGuard guard) {
		Object previous;
		do {
			previous = this.current.get();
			if (previous == CLOSED) {
				guard.release();
				return;
			}
		}
		while (!this.current.compareAndSet(previous, guard));
		if (previous instanceof InFlightGuard replaced) {
			replaced.release();
		}
	}

	/**
	 * Returns the current attempt's guard.
	 * @return the guard, or {@code null} before the first pick and after close
	 */
	public @Nullable InFlightGuard guard() {
		return (this.current.get() instanceof InFlightGuard guard) ? guard : null;
	}

	/**
	 * Releases the current guard and any later one; idempotent.
	 */
	public void close() {
		if (this.current.getAndSet(CLOSED) instanceof InFlightGuard last) {
			last.release();
		}
	}

}
