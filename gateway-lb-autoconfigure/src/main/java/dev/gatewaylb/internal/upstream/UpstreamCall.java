package dev.gatewaylb.internal.upstream;

import dev.gatewaylb.gateway.upstream.UpstreamObserver;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.netty.channel.Channel;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.AttributeKey;
import org.jspecify.annotations.Nullable;
import reactor.netty.channel.ChannelOperations;

/**
 * One request on one upstream connection, as the service's client sees it: the attempt
 * observing it, looked up in the request's Reactor context once, and its header deadline.
 * Kept in a channel attribute from the moment the request is prepared until its response
 * ends, so that the client's later callbacks find it without walking the subscriber
 * chain's contexts again.
 * <p>
 * The header deadline is one task on the connection's event loop, armed when the request
 * is sent and cancelled when the headers arrive: what Reactor Netty's per-request
 * response timeout does with a {@code ReadTimeoutHandler} added to the pipeline and
 * removed again, without touching the pipeline. When it fires it does what that handler
 * does, an exception into the pipeline and the channel closed, which fails the request
 * with {@link ReadTimeoutException}.
 * <p>
 * Every callback, and the deadline task, runs on the connection's event loop, one at a
 * time: the fields need no synchronization. A task that fires after its request ended,
 * with the connection back in the pool or serving another request, finds itself no longer
 * the channel's call and does nothing.
 */
final class UpstreamCall implements Runnable {

	private static final AttributeKey<UpstreamCall> KEY = AttributeKey.valueOf(UpstreamCall.class.getName());

	/**
	 * The request's operations (Reactor Netty's request and response of one exchange on
	 * the channel): what tells this request from the next one on the same connection;
	 * {@code null} for a WebSocket handshake, the only request of its connection, whose
	 * operations Reactor Netty replaces with the session's before the handshake is
	 * written.
	 */
	private final @Nullable Object operations;

	private final Channel channel;

	private final @Nullable UpstreamObserver observer;

	private final long deadlineNanos;

	private @Nullable ScheduledFuture<?> deadline;

	private UpstreamCall(@Nullable Object operations, Channel channel, @Nullable UpstreamObserver observer,
			long deadlineNanos) {
		this.operations = operations;
		this.channel = channel;
		this.observer = observer;
		this.deadlineNanos = deadlineNanos;
	}

	/**
	 * Starts the call of a request about to be written.
	 * @param operations the request, as the client hands it to its callbacks
	 * @param channel the request's channel
	 * @param observer the attempt observing the request, or {@code null}
	 * @param headerDeadline how long to wait for the headers once the request is sent, or
	 * {@code null} for no limit
	 */
	static void prepared(Object operations, Channel channel, @Nullable UpstreamObserver observer,
			@Nullable Duration headerDeadline) {
		UpstreamCall call = (observer != null || headerDeadline != null) ? new UpstreamCall(operations, channel,
				observer, (headerDeadline != null) ? headerDeadline.toNanos() : 0) : null;
		UpstreamCall previous = channel.attr(KEY).getAndSet(call);
		if (previous != null) {
			previous.disarm();
		}
	}

	/**
	 * Starts the call of a WebSocket handshake about to be written, the one request of
	 * its connection, and sends it: a GET without a body, which Reactor Netty writes
	 * without reporting when it is done. Its header deadline starts now.
	 * @param channel the handshake's channel
	 * @param observer the attempt observing it, or {@code null}
	 * @param headerDeadline how long to wait for the handshake's answer, or {@code null}
	 * for no limit
	 */
	static void handshake(Channel channel, @Nullable UpstreamObserver observer, @Nullable Duration headerDeadline) {
		UpstreamCall call = new UpstreamCall(null, channel, observer,
				(headerDeadline != null) ? headerDeadline.toNanos() : 0);
		UpstreamCall previous = channel.attr(KEY).getAndSet(call);
		if (previous != null) {
			previous.disarm();
		}
		call.sent();
	}

	/**
	 * Ends whatever call the channel has, its deadline cancelled: the answer to a
	 * WebSocket handshake arrived.
	 * @param channel the channel
	 * @return the call, or {@code null} if it had ended
	 */
	static @Nullable UpstreamCall take(Channel channel) {
		UpstreamCall call = channel.attr(KEY).getAndSet(null);
		if (call != null) {
			call.disarm();
		}
		return call;
	}

	/**
	 * Returns the call of a request, if it is still running.
	 * @param operations the request or its response, as the client hands it to its
	 * callbacks
	 * @param channel the request's channel
	 * @return the call, or {@code null}
	 */
	static @Nullable UpstreamCall of(Object operations, Channel channel) {
		UpstreamCall call = channel.attr(KEY).get();
		return (call != null && call.operations == operations) ? call : null;
	}

	/**
	 * Ends the call of a request: its deadline is cancelled and the channel forgets it.
	 * @param operations the request or its response
	 * @param channel the request's channel
	 * @return the call, or {@code null} if it had ended
	 */
	static @Nullable UpstreamCall end(Object operations, Channel channel) {
		UpstreamCall call = of(operations, channel);
		if (call != null) {
			channel.attr(KEY).compareAndSet(call, null);
			call.disarm();
		}
		return call;
	}

	/**
	 * Forgets whatever call the channel has, its request over (the connection released to
	 * the pool or closing), and cancels its deadline.
	 * @param channel the channel
	 */
	static void forget(Channel channel) {
		UpstreamCall call = channel.attr(KEY).getAndSet(null);
		if (call != null) {
			call.disarm();
		}
	}

	/**
	 * The request, body included, was written: the header deadline starts.
	 */
	void sent() {
		if (this.deadlineNanos > 0) {
			this.deadline = this.channel.eventLoop().schedule(this, this.deadlineNanos, TimeUnit.NANOSECONDS);
		}
		UpstreamObserver observer = this.observer;
		if (observer != null) {
			observer.requestSent();
		}
	}

	/**
	 * The headers arrived: the deadline is met.
	 * @param status the response status
	 */
	void headers(int status) {
		disarm();
		UpstreamObserver observer = this.observer;
		if (observer != null) {
			observer.responseReceived(status);
		}
	}

	@Nullable UpstreamObserver observer() {
		return this.observer;
	}

	private void disarm() {
		ScheduledFuture<?> deadline = this.deadline;
		if (deadline != null) {
			this.deadline = null;
			deadline.cancel(false);
		}
	}

	/**
	 * The deadline passed with no headers.
	 */
	@Override
	public void run() {
		Channel channel = this.channel;
		if (this.deadline == null || channel.attr(KEY).get() != this
				|| (this.operations != null && ChannelOperations.get(channel) != this.operations)) {
			return;
		}
		this.deadline = null;
		channel.pipeline().fireExceptionCaught(ReadTimeoutException.INSTANCE);
		channel.close();
	}

}
