package dev.gatewaylb.internal.upstream;

import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One dial of a new connection to one endpoint: the addresses its name resolved to, in
 * the order they are tried, the deadline of {@code timeouts.connect} that bounds the
 * whole of it (resolution, every attempt, the TLS handshake), and the race's result.
 * <p>
 * Made by the {@link DialResolver} when the connection's name is resolved, and carried to
 * the {@link DialHandler} of the connection inside the addresses the resolver hands to
 * Reactor Netty ({@link DialAddress}). Both run on the connection's event loop, and so
 * does every step of the race: the fields need no synchronization.
 */
final class Dial {

	private final String endpoint;

	private final List<InetSocketAddress> candidates;

	private final long deadlineNanos;

	private final long delayNanos;

	private @Nullable InetSocketAddress winner;

	private @Nullable Throwable failure;

	/**
	 * Creates a dial.
	 * @param endpoint the endpoint's {@code host:port}
	 * @param candidates the addresses to try, in order
	 * @param deadlineNanos when the dial must be done, on the request clock's clock
	 * @param delayNanos the delay between the starts of two attempts, 0 for one after
	 * another
	 */
	Dial(String endpoint, List<InetSocketAddress> candidates, long deadlineNanos, long delayNanos) {
		this.endpoint = endpoint;
		this.candidates = candidates;
		this.deadlineNanos = deadlineNanos;
		this.delayNanos = delayNanos;
	}

	/**
	 * Orders the addresses of one answer for a race (RFC 8305, section 4): the first
	 * address's family first, then the families alternating, each family in the order the
	 * resolver gave.
	 * @param answer the resolver's addresses
	 * @return the addresses in the order to try them
	 */
	static List<InetSocketAddress> interleaved(List<InetSocketAddress> answer) {
		if (answer.size() < 2) {
			return answer;
		}
		boolean firstIsV6 = answer.get(0).getAddress() instanceof Inet6Address;
		List<InetSocketAddress> preferred = new ArrayList<>(answer.size());
		List<InetSocketAddress> other = new ArrayList<>(answer.size());
		for (InetSocketAddress address : answer) {
			((address.getAddress() instanceof Inet6Address) == firstIsV6 ? preferred : other).add(address);
		}
		List<InetSocketAddress> order = new ArrayList<>(answer.size());
		for (int i = 0; i < Math.max(preferred.size(), other.size()); i++) {
			if (i < preferred.size()) {
				order.add(preferred.get(i));
			}
			if (i < other.size()) {
				order.add(other.get(i));
			}
		}
		return order;
	}

	/**
	 * The addresses to hand to Reactor Netty. When the dial races, the first carries the
	 * race and the second stands for its winner: Reactor Netty tries it on a connection
	 * of its own when the race was won by an attempt other than the connection's own.
	 * Otherwise one per candidate, tried one after another, each within what is left of
	 * the deadline.
	 * @return the addresses
	 */
	List<InetSocketAddress> addresses() {
		if (races()) {
			return List.of(new DialAddress(this, this.candidates.get(0), false),
					new DialAddress(this, this.candidates.get(1), true));
		}
		List<InetSocketAddress> addresses = new ArrayList<>(this.candidates.size());
		for (InetSocketAddress candidate : this.candidates) {
			addresses.add(new DialAddress(this, candidate, false));
		}
		return addresses;
	}

	boolean races() {
		return this.delayNanos > 0 && this.candidates.size() > 1;
	}

	String endpoint() {
		return this.endpoint;
	}

	List<InetSocketAddress> candidates() {
		return this.candidates;
	}

	long deadlineNanos() {
		return this.deadlineNanos;
	}

	long delayNanos() {
		return this.delayNanos;
	}

	void won(InetSocketAddress winner) {
		this.winner = winner;
	}

	void lost(Throwable failure) {
		this.failure = failure;
	}

	@Nullable InetSocketAddress winner() {
		return this.winner;
	}

	@Nullable Throwable failure() {
		return this.failure;
	}

	/**
	 * One address of a dial as Reactor Netty sees it: a resolved address it connects a
	 * channel to, which tells the channel's {@link DialHandler} which dial it belongs to.
	 * Without that handler in the pipeline it is an ordinary resolved address.
	 */
	static final class DialAddress extends InetSocketAddress {

		private static final long serialVersionUID = 1L;

		private final transient Dial dial;

		private final transient InetSocketAddress target;

		private final boolean winner;

		DialAddress(Dial dial, InetSocketAddress target, boolean winner) {
			super(target.getAddress(), target.getPort());
			this.dial = dial;
			this.target = target;
			this.winner = winner;
		}

		Dial dial() {
			return this.dial;
		}

		/**
		 * Returns the address itself, without the dial.
		 */
		InetSocketAddress target() {
			return this.target;
		}

		/**
		 * Returns whether this address stands for the race's winner.
		 */
		boolean winner() {
			return this.winner;
		}

	}

}
