package dev.gatewaylb.internal.upstream;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.netty.channel.ConnectTimeoutException;
import io.netty.resolver.AbstractAddressResolver;
import io.netty.resolver.AddressResolver;
import io.netty.resolver.AddressResolverGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * Resolves one service's hostname endpoints through the resolver every upstream shares
 * ({@link UpstreamResolver}), and starts each one's {@link Dial}: the deadline of
 * {@code timeouts.connect} begins when the name is asked, and a resolution that outlasts
 * it fails the dial. The answer is ordered for the race and recorded for the actuator.
 * <p>
 * Reactor Netty resolves IP literals itself and never asks; the {@link DialHandler}
 * starts their dial when the connection is opened.
 */
final class DialResolver extends AbstractAddressResolver<InetSocketAddress> {

	private final AddressResolver<InetSocketAddress> shared;

	private final long connectTimeoutNanos;

	private final long delayNanos;

	private final EndpointAddresses record;

	/**
	 * The request clock's time: the deadlines are on it.
	 */
	private final LongSupplier nanoClock;

	private DialResolver(EventExecutor executor, AddressResolver<InetSocketAddress> shared, long connectTimeoutNanos,
			long delayNanos, EndpointAddresses record, LongSupplier nanoClock) {
		super(executor, InetSocketAddress.class);
		this.shared = shared;
		this.nanoClock = nanoClock;
		this.connectTimeoutNanos = connectTimeoutNanos;
		this.delayNanos = delayNanos;
		this.record = record;
	}

	/**
	 * Returns the resolver group of one service: one resolver per event loop, each asking
	 * the shared group's resolver of the same loop (and its one cache).
	 * @param shared the resolver group every upstream shares
	 * @param connectTimeoutNanos {@code timeouts.connect}
	 * @param delayNanos {@code timeouts.happy-eyeballs}, 0 for no race
	 * @param record where the answers are recorded
	 * @param nanoClock the request clock's time, of the deadline
	 * @return the group
	 */
	static AddressResolverGroup<InetSocketAddress> group(AddressResolverGroup<?> shared, long connectTimeoutNanos,
			long delayNanos, EndpointAddresses record, LongSupplier nanoClock) {
		@SuppressWarnings("unchecked")
		AddressResolverGroup<InetSocketAddress> inet = (AddressResolverGroup<InetSocketAddress>) shared;
		return new AddressResolverGroup<>() {

			@Override
			protected AddressResolver<InetSocketAddress> newResolver(EventExecutor executor) {
				return new DialResolver(executor, inet.getResolver(executor), connectTimeoutNanos, delayNanos, record,
						nanoClock);
			}

		};
	}

	@Override
	protected boolean doIsResolved(InetSocketAddress address) {
		return !address.isUnresolved();
	}

	@Override
	protected void doResolve(InetSocketAddress unresolved, Promise<InetSocketAddress> promise) {
		this.shared.resolve(unresolved, promise);
	}

	@Override
	protected void doResolveAll(InetSocketAddress unresolved, Promise<List<InetSocketAddress>> promise) {
		String endpoint = EndpointAddresses.key(unresolved.getHostString(), unresolved.getPort());
		long deadline = this.nanoClock.getAsLong() + this.connectTimeoutNanos;
		Future<List<InetSocketAddress>> answer = this.shared.resolveAll(unresolved);
		if (answer.isDone()) {
			// A cached answer, the common case: no timer.
			answered(answer, endpoint, deadline, promise);
			return;
		}
		ScheduledFuture<?> timeout = executor().schedule(() -> {
			promise.tryFailure(new ConnectTimeoutException("resolving " + unresolved.getHostString()
					+ " took longer than timeouts.connect (" + millis(this.connectTimeoutNanos) + " ms)"));
		}, this.connectTimeoutNanos, TimeUnit.NANOSECONDS);
		answer.addListener((done) -> {
			timeout.cancel(false);
			answered(answer, endpoint, deadline, promise);
		});
	}

	private void answered(Future<List<InetSocketAddress>> answer, String endpoint, long deadline,
			Promise<List<InetSocketAddress>> promise) {
		if (!answer.isSuccess()) {
			promise.tryFailure(answer.cause());
			return;
		}
		List<InetSocketAddress> addresses = answer.getNow();
		this.record.resolved(endpoint, addresses);
		promise.trySuccess(new Dial(endpoint, Dial.interleaved(addresses), deadline, this.delayNanos).addresses());
	}

	@Override
	public void close() {
		// The shared resolver belongs to the application, not to one service.
	}

	static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos + 999_999);
	}

	@Override
	public boolean isSupported(SocketAddress address) {
		return this.shared.isSupported(address);
	}

}
