package dev.gatewaylb.gateway.upstream;

import java.time.Duration;

import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * One attempt's view of its upstream exchange: the service's HTTP client calls it as the
 * request and the response go by, on the upstream connection's event loop. The attempt
 * puts itself in the Reactor context of the routing subscription under
 * {@link #CONTEXT_KEY}; Reactor Netty hands that context to every callback of the request
 * it sends.
 * <p>
 * Implementations must be cheap and must not block: every method runs on an event loop.
 */
public interface UpstreamObserver {

	/**
	 * The Reactor context key of the observer.
	 */
	Object CONTEXT_KEY = UpstreamObserver.class;

	/**
	 * Called when a connection has been acquired and the request is about to be written.
	 * @param eventLoop the event loop of the request's connection, on which this is
	 * called: a timer of the attempt scheduled there (a hedge) takes no lock
	 * @return how long to wait for the response headers once the request is sent, or
	 * {@code null} for no limit
	 */
	@Nullable Duration requestPrepared(EventLoop eventLoop);

	/**
	 * Called when the request, body included, has been written.
	 */
	void requestSent();

	/**
	 * Called when the response status and headers arrived.
	 * @param status the response status
	 */
	void responseReceived(int status);

	/**
	 * Called when the response body arrived whole.
	 */
	void responseCompleted();

	/**
	 * Called when the response failed after its headers arrived: the connection broke, or
	 * the body went idle past {@code timeouts.body-idle}. Also called when the gateway
	 * itself closes the connection mid-body (the client went away, or a retry abandoned
	 * the response): the observer knows which of those it caused.
	 * @param error what went wrong
	 */
	void responseFailed(Throwable error);

	/**
	 * Returns the observer in a Reactor context.
	 * @param context the context of a request or response
	 * @return the observer, or {@code null} when the request is not an attempt's
	 */
	static @Nullable UpstreamObserver in(ContextView context) {
		return context.getOrDefault(CONTEXT_KEY, null);
	}

}
