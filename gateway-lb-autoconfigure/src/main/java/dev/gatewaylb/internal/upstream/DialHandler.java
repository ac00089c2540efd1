package dev.gatewaylb.internal.upstream;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.control.RequestClock;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * Opens one upstream connection within {@code timeouts.connect}, racing the addresses of
 * a hostname that has several ({@code timeouts.happy-eyeballs}, RFC 8305).
 * <p>
 * One per connection, at the head of its pipeline, where it sees the connect Reactor
 * Netty asks for, and gone from it once the connection is open. The address it is given
 * is a {@link Dial.DialAddress} when the {@link DialResolver} resolved the name; an IP
 * literal, which Reactor Netty resolves itself, starts its dial here.
 * <p>
 * <b>The race.</b> The connection's own socket connects to the first address; each
 * {@code happy-eyeballs} delay after the last start, and at once when every attempt in
 * flight has failed, a bare probe socket on the same event loop connects to the next.
 * When the connection's own attempt wins, the probes are closed and that is all. When a
 * probe wins, it is closed too, the connection's own attempt is abandoned and its connect
 * fails, and Reactor Netty, given a second address standing for the winner, opens a fresh
 * connection to it: one handshake more, only when the first address was slow to answer.
 * Reactor Netty sees one dial, one success or one failure, so passive health is charged
 * once per dial and never for the attempts that lost.
 * <p>
 * <b>The deadline.</b> The dial's deadline is set when the name is asked; each connect
 * (the connection's own, every probe, the winner's) gets only what is left of it as its
 * connect timeout. The TLS handshake, which starts when the connection is active, ends by
 * the deadline too: a timer of the request clock, armed when the connection opens, fails
 * it there. Netty's own handshake timer cannot: it is armed only once the ClientHello is
 * built and sent, so it would give the handshake what was left on top of that (a few ms
 * on a warm JVM, a few hundred on the first dial of a cold one). It is kept, shortened to
 * what was left, as a backstop.
 * <p>
 * Everything here runs on the connection's event loop, the probes' callbacks too (they
 * are registered on it): no field needs synchronization.
 */
final class DialHandler extends ChannelOutboundHandlerAdapter {

	static final String NAME = "gateway-lb.dial";

	private static final ChannelInboundHandlerAdapter PROBE = new Probe();

	private final long connectTimeoutNanos;

	private final EndpointAddresses record;

	/**
	 * The request clock: the deadlines are on its time, and the handshake's is one of its
	 * timers.
	 */
	private final RequestClock clock;

	DialHandler(long connectTimeoutNanos, EndpointAddresses record, RequestClock clock) {
		this.connectTimeoutNanos = connectTimeoutNanos;
		this.record = record;
		this.clock = clock;
	}

	@Override
	public void connect(ChannelHandlerContext ctx, SocketAddress remote, @Nullable SocketAddress local,
			ChannelPromise promise) {
		if (!(remote instanceof Dial.DialAddress address)) {
			// An IP literal (or a proxy's address): the dial starts now.
			String endpoint = (remote instanceof InetSocketAddress inet)
					? EndpointAddresses.key(inet.getHostString(), inet.getPort()) : null;
			connect(ctx, remote, local, promise, this.clock.nanoTime() + this.connectTimeoutNanos, endpoint);
			return;
		}
		Dial dial = address.dial();
		if (address.winner()) {
			// The race was won by a probe: this fresh connection goes to its address.
			InetSocketAddress winner = dial.winner();
			if (winner == null) {
				Throwable failure = dial.failure();
				promise.tryFailure((failure != null) ? failure : timedOut(dial.endpoint()));
				return;
			}
			connect(ctx, winner, local, promise, dial.deadlineNanos(), dial.endpoint());
		}
		else if (dial.races()) {
			new Race(ctx, dial, local, promise).start();
		}
		else {
			connect(ctx, address.target(), local, promise, dial.deadlineNanos(), dial.endpoint());
		}
	}

	/**
	 * Connects the channel to one address within what is left of the deadline.
	 */
	private void connect(ChannelHandlerContext ctx, SocketAddress remote, @Nullable SocketAddress local,
			ChannelPromise promise, long deadlineNanos, @Nullable String endpoint) {
		long left = deadlineNanos - this.clock.nanoTime();
		if (left <= 0) {
			promise.tryFailure(timedOut(remote.toString()));
			return;
		}
		ctx.channel().config().setConnectTimeoutMillis(connectMillis(left));
		promise.addListener((connected) -> {
			if (connected.isSuccess()) {
				opened(ctx.channel(), deadlineNanos, endpoint);
			}
		});
		ctx.connect(remote, local, promise);
	}

	/**
	 * The connection is open, before it is active: the TLS handshake, about to start,
	 * must end by the deadline, and the handler leaves the pipeline, so that the
	 * connection's requests never pass through it.
	 */
	private void opened(Channel channel, long deadlineNanos, @Nullable String endpoint) {
		SslHandler tls = channel.pipeline().get(SslHandler.class);
		if (tls != null) {
			handshakeBy(channel, tls, deadlineNanos,
					(endpoint != null) ? endpoint : String.valueOf(channel.remoteAddress()));
		}
		if (endpoint != null) {
			this.record.opened(endpoint, channel);
		}
		if (channel.pipeline().context(this) != null) {
			channel.pipeline().remove(this);
		}
	}

	/**
	 * Arms the deadline of the handshake: when the request clock reaches the dial's
	 * deadline with the handshake still under way, the connection fails with a connect
	 * timeout, which Reactor Netty hears as it hears a failed handshake (an error in the
	 * pipeline before the connection is handed out), and is closed.
	 */
	private void handshakeBy(Channel channel, SslHandler tls, long deadlineNanos, String target) {
		long leftNanos = deadlineNanos - this.clock.nanoTime();
		long leftMillis = Math.max(1, DialResolver.millis(leftNanos));
		long configured = tls.getHandshakeTimeoutMillis();
		if (configured <= 0 || leftMillis < configured) {
			// A backstop only: Netty starts this timer once the ClientHello is out.
			tls.setHandshakeTimeoutMillis(leftMillis);
		}
		Future<Channel> handshake = tls.handshakeFuture();
		RequestClock.Timer timer = this.clock.schedule(() -> {
			try {
				channel.eventLoop().execute(() -> handshakeTimedOut(channel, handshake, target));
			}
			catch (RejectedExecutionException stopped) {
				// The event loop is gone, and the connection with it.
			}
		}, Math.max(0, leftNanos), TimeUnit.NANOSECONDS);
		// Done, failed, or the connection closed (which fails it): the timer goes.
		handshake.addListener((done) -> timer.cancel());
	}

	private static void handshakeTimedOut(Channel channel, Future<Channel> handshake, String target) {
		if (handshake.isDone() || !channel.isOpen()) {
			return;
		}
		channel.pipeline()
			.fireExceptionCaught(new ConnectTimeoutException(
					"the TLS handshake with " + target + " took longer than timeouts.connect"));
		channel.close();
	}

	private static int connectMillis(long nanos) {
		return (int) Math.min(Integer.MAX_VALUE, DialResolver.millis(nanos));
	}

	private static ConnectTimeoutException timedOut(String target) {
		return new ConnectTimeoutException("connecting to " + target + " took longer than timeouts.connect");
	}

	/**
	 * The race of one dial's addresses, on the connection's event loop.
	 */
	private final class Race {

		private final ChannelHandlerContext ctx;

		private final Dial dial;

		private final @Nullable SocketAddress local;

		private final ChannelPromise promise;

		private final List<InetSocketAddress> candidates;

		private final List<Channel> probes = new ArrayList<>(2);

		private int next;

		private int inFlight;

		private boolean decided;

		private @Nullable Throwable lastFailure;

		private @Nullable ScheduledFuture<?> timer;

		Race(ChannelHandlerContext ctx, Dial dial, @Nullable SocketAddress local, ChannelPromise promise) {
			this.ctx = ctx;
			this.dial = dial;
			this.local = local;
			this.promise = promise;
			this.candidates = dial.candidates();
		}

		void start() {
			long left = this.dial.deadlineNanos() - DialHandler.this.clock.nanoTime();
			if (left <= 0) {
				lose(timedOut(this.dial.endpoint()));
				return;
			}
			ChannelPromise own = this.ctx.newPromise();
			own.addListener((connected) -> ownEnded(connected.isSuccess(), connected.cause()));
			this.ctx.channel().config().setConnectTimeoutMillis(connectMillis(left));
			this.next = 1;
			this.inFlight = 1;
			this.ctx.connect(this.candidates.get(0), this.local, own);
			armNext();
		}

		private void armNext() {
			if (!this.decided && this.next < this.candidates.size()) {
				this.timer = this.ctx.executor()
					.schedule(this::startNext, this.dial.delayNanos(), TimeUnit.NANOSECONDS);
			}
		}

		private void startNext() {
			this.timer = null;
			if (this.decided || this.next >= this.candidates.size()) {
				return;
			}
			long left = this.dial.deadlineNanos() - DialHandler.this.clock.nanoTime();
			if (left <= 0) {
				// No time for another attempt: those in flight end by the deadline.
				this.next = this.candidates.size();
				if (this.inFlight == 0) {
					lose(timedOut(this.dial.endpoint()));
				}
				return;
			}
			InetSocketAddress candidate = this.candidates.get(this.next++);
			Channel owner = this.ctx.channel();
			ChannelFuture probe = new Bootstrap().group(owner.eventLoop())
				.channel(owner.getClass())
				.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis(left))
				.handler(PROBE)
				.connect(candidate);
			this.inFlight++;
			this.probes.add(probe.channel());
			probe.addListener(
					(connected) -> probeEnded(probe.channel(), candidate, connected.isSuccess(), connected.cause()));
			armNext();
		}

		private void ownEnded(boolean connected, @Nullable Throwable cause) {
			this.inFlight--;
			if (this.decided) {
				return;
			}
			if (connected) {
				this.decided = true;
				stopTheOthers();
				opened(this.ctx.channel(), this.dial.deadlineNanos(), this.dial.endpoint());
				this.promise.trySuccess();
				return;
			}
			if (cause instanceof ClosedChannelException) {
				// Not the address's answer: the connection was closed while it raced (its
				// request cancelled, the pool closing). Its probes go with it rather than
				// connect on until the deadline.
				this.decided = true;
				stopTheOthers();
				this.promise.tryFailure(cause);
				return;
			}
			failed(cause);
		}

		private void probeEnded(Channel probe, InetSocketAddress candidate, boolean connected,
				@Nullable Throwable cause) {
			this.inFlight--;
			this.probes.remove(probe);
			if (this.decided || connected) {
				// A probe only finds the address that answers: the connection Reactor
				// Netty uses is its own.
				probe.close();
			}
			if (this.decided) {
				return;
			}
			if (connected) {
				this.decided = true;
				this.dial.won(candidate);
				stopTheOthers();
				// Fails this connect: Reactor Netty tries the address that stands for the
				// winner on a fresh connection. The abandoned attempt is closed after, so
				// its failure is not what Reactor Netty hears.
				this.promise.tryFailure(new ConnectTimeoutException("connecting to " + this.candidates.get(0)
						+ " was slower than " + candidate + ", which answered first"));
				this.ctx.channel().close();
				return;
			}
			failed(cause);
		}

		private void failed(@Nullable Throwable cause) {
			this.lastFailure = cause;
			if (this.inFlight > 0) {
				return;
			}
			if (this.next < this.candidates.size()) {
				// Nothing in flight: the next attempt starts now.
				cancelTimer();
				startNext();
				return;
			}
			lose((cause != null) ? cause : timedOut(this.dial.endpoint()));
		}

		private void lose(Throwable failure) {
			this.decided = true;
			cancelTimer();
			this.dial.lost(failure);
			this.promise.tryFailure(failure);
		}

		private void stopTheOthers() {
			cancelTimer();
			for (Channel probe : this.probes) {
				probe.close();
			}
			this.probes.clear();
		}

		private void cancelTimer() {
			ScheduledFuture<?> timer = this.timer;
			if (timer != null) {
				this.timer = null;
				timer.cancel(false);
			}
		}

	}

	/**
	 * A probe's whole pipeline: it reads nothing, and its failures are the race's.
	 */
	@io.netty.channel.ChannelHandler.Sharable
	private static final class Probe extends ChannelInboundHandlerAdapter {

		@Override
		public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
			ctx.close();
		}

	}

}
