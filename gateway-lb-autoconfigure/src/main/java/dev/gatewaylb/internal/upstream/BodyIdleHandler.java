package dev.gatewaylb.internal.upstream;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * {@code timeouts.body-idle} on an upstream connection once the response headers are in:
 * Netty's {@code ReadTimeoutHandler}, except that only time during which the gateway
 * wants to read counts. Reactor Netty stops reading an upstream connection (it turns
 * {@code autoRead} off) when nobody asks for the body: a client that reads slowly holds
 * the gateway's writes back, and with them the reads of its answer. That silence is the
 * client's, not the endpoint's, so the timer sees a connection that is not being read as
 * busy and starts its count again; {@code timeouts.response-write-idle} deals with the
 * client.
 * <p>
 * One timer per connection, on its event loop, rearmed for what is left of the limit (as
 * Netty's handler does): every method runs on that event loop, so the fields need no
 * synchronization. Past the limit it fires {@link ReadTimeoutException} and closes the
 * connection, which {@link Outcome#classify} charges to the endpoint as a body that broke
 * off.
 */
public final class BodyIdleHandler extends ChannelDuplexHandler {

	/**
	 * The handler's name in the pipeline.
	 */
	public static final String NAME = "gatewayLbBodyIdle";

	private final long idleNanos;

	/**
	 * The request clock's time: the deadlines are on it.
	 */
	private final LongSupplier nanoClock;

	private long lastReadNanos;

	private boolean closed;

	private @Nullable ScheduledFuture<?> timer;

	/**
	 * Creates the handler.
	 * @param idleMillis the limit, above 0
	 * @param nanoClock the request clock's time
	 */
	public BodyIdleHandler(long idleMillis, LongSupplier nanoClock) {
		this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMillis);
		this.nanoClock = nanoClock;
	}

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		this.lastReadNanos = this.nanoClock.getAsLong();
		arm(ctx, this.idleNanos);
	}

	@Override
	public void handlerRemoved(ChannelHandlerContext ctx) {
		disarm();
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) throws Exception {
		disarm();
		super.channelInactive(ctx);
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
		this.lastReadNanos = this.nanoClock.getAsLong();
		super.channelRead(ctx, msg);
	}

	private void check(ChannelHandlerContext ctx) {
		this.timer = null;
		if (this.closed || !ctx.channel().isOpen()) {
			return;
		}
		long now = this.nanoClock.getAsLong();
		if (!ctx.channel().config().isAutoRead()) {
			// Nobody is asking for the body: the client holds the gateway back.
			this.lastReadNanos = now;
			arm(ctx, this.idleNanos);
			return;
		}
		long left = this.lastReadNanos + this.idleNanos - now;
		if (left > 0) {
			arm(ctx, left);
			return;
		}
		this.closed = true;
		ctx.fireExceptionCaught(ReadTimeoutException.INSTANCE);
		ctx.close();
	}

	private void arm(ChannelHandlerContext ctx, long delayNanos) {
		this.timer = ctx.executor().schedule(() -> check(ctx), delayNanos, TimeUnit.NANOSECONDS);
	}

	private void disarm() {
		ScheduledFuture<?> current = this.timer;
		if (current != null) {
			current.cancel(false);
			this.timer = null;
		}
	}

}
