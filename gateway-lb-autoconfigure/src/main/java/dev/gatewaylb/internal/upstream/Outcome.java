package dev.gatewaylb.internal.upstream;

import dev.gatewaylb.gateway.upstream.UpstreamObserver;

import java.io.IOException;
import java.nio.channels.NotYetConnectedException;

import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.netty.handler.timeout.ReadTimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.netty.channel.AbortedException;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquirePendingLimitException;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquireTimeoutException;
import reactor.netty.internal.shaded.reactor.pool.PoolShutdownException;

import org.springframework.http.HttpStatus;

/**
 * What became of one attempt, and whom it is charged to: the one table of attribution
 * (docs/health.md). An endpoint is charged for what it did (a failure when it refused,
 * reset, stalled or answered 5xx; a success only once its whole body arrived), nobody for
 * what the client or the gateway did (a client that went away, an attempt the gateway
 * cancelled, a pool with no free connection).
 */
public final class Outcome {

	private Outcome() {
	}

	/**
	 * How far an attempt got, as its {@link UpstreamObserver} saw it.
	 */
	public enum Phase {

		/**
		 * No connection yet: connecting, or waiting in the pool's pending queue.
		 */
		CONNECTING,

		/**
		 * A connection is acquired and the request is being written.
		 */
		SENDING,

		/**
		 * The request is written; the headers have not arrived.
		 */
		AWAITING_HEADERS,

		/**
		 * The headers arrived; the body is streaming.
		 */
		RECEIVING

	}

	/**
	 * The kinds of outcome.
	 */
	public enum Kind {

		/**
		 * The endpoint answered and its whole body arrived (any status it is not charged
		 * for).
		 */
		SUCCESS(Charge.SUCCESS, true, null, null),

		/**
		 * The endpoint answered with a status passive health counts as a failure (5xx by
		 * default); the answer is passed on unless retried.
		 */
		SERVER_ERROR(Charge.FAILURE, true, null, null),

		/**
		 * No connection could be opened: refused, unreachable, unresolvable, connect
		 * timeout, TLS handshake failure. The request never left the gateway.
		 */
		CONNECT_FAILED(Charge.FAILURE, false, HttpStatus.BAD_GATEWAY, "upstream connect failed"),

		/**
		 * The connection broke after the request started and before the headers.
		 */
		CONNECTION_LOST(Charge.FAILURE, true, HttpStatus.BAD_GATEWAY, "upstream connection failed"),

		/**
		 * No headers within what was left of {@code timeouts.response}.
		 */
		TIMEOUT(Charge.FAILURE, true, HttpStatus.GATEWAY_TIMEOUT, "upstream response timeout"),

		/**
		 * The body broke off or went idle past {@code timeouts.body-idle} after the
		 * headers went to the client; the client sees a truncated body.
		 */
		BODY_FAILED(Charge.FAILURE, true, null, null),

		/**
		 * The endpoint's pool had no connection to give within its pending limit or
		 * timeout, or was closing. The endpoint was not contacted.
		 */
		SATURATED(Charge.NOBODY, false, HttpStatus.SERVICE_UNAVAILABLE, "upstream saturated"),

		/**
		 * Every endpoint was at its concurrency limit ({@code concurrency.limit}), and
		 * the request's partition past its share: answered 503 with {@code Retry-After}
		 * at once, never retried. No endpoint was contacted.
		 */
		SHED(Charge.NOBODY, false, HttpStatus.SERVICE_UNAVAILABLE, "concurrency limit reached"),

		/**
		 * The client sent no part of its request body for
		 * {@code timeouts.request-body-idle}: the client's doing. The attempt is
		 * cancelled and its connection let go; the client gets 408, or a closed
		 * connection when the response had started.
		 */
		REQUEST_BODY_IDLE(Charge.NOBODY, true, HttpStatus.REQUEST_TIMEOUT, "request body timeout"),

		/**
		 * The client went away before the answer was complete.
		 */
		CLIENT_GONE(Charge.NOBODY, true, null, null),

		/**
		 * The gateway cancelled the attempt itself (a retry or a hedge made it moot).
		 */
		CANCELLED(Charge.NOBODY, true, null, null),

		/**
		 * An error that did not come from the upstream exchange (a filter's own bug, for
		 * one): passed on, charged to nobody.
		 */
		NOT_UPSTREAM(Charge.NOBODY, true, null, null);

		private final Charge charge;

		private final boolean mayHaveReached;

		private final @Nullable HttpStatus status;

		private final @Nullable String error;

		Kind(Charge charge, boolean mayHaveReached, @Nullable HttpStatus status, @Nullable String error) {
			this.charge = charge;
			this.mayHaveReached = mayHaveReached;
			this.status = status;
			this.error = error;
		}

		/**
		 * Returns what the endpoint is charged with.
		 * @return the charge
		 */
		public Charge charge() {
			return this.charge;
		}

		/**
		 * Returns whether the endpoint may have received the request, so that sending it
		 * again is safe only for a replayable request.
		 * @return whether it may have reached the endpoint
		 */
		public boolean mayHaveReached() {
			return this.mayHaveReached;
		}

		/**
		 * Returns the status the gateway answers when the attempt is not retried, or
		 * {@code null} when the upstream's answer (or the error) passes on as it is.
		 * @return the status
		 */
		public @Nullable HttpStatus status() {
			return this.status;
		}

		/**
		 * Returns the {@code error} of the gateway's JSON answer, with {@link #status()}.
		 * @return the error text
		 */
		public @Nullable String error() {
			return this.error;
		}

	}

	/**
	 * What an outcome charges to the endpoint.
	 */
	public enum Charge {

		/**
		 * A success: the failure streak ends.
		 */
		SUCCESS,

		/**
		 * A failure: it counts towards ejection.
		 */
		FAILURE,

		/**
		 * Nothing: not the endpoint's doing.
		 */
		NOBODY

	}

	/**
	 * Classifies an attempt that ended in an error.
	 * @param phase how far the attempt got
	 * @param error the error
	 * @return the kind
	 */
	public static Kind classify(Phase phase, Throwable error) {
		if (causedBy(error, RequestBodyIdleException.class)) {
			// The client's silence, whatever the attempt's phase.
			return Kind.REQUEST_BODY_IDLE;
		}
		return switch (phase) {
			case CONNECTING -> {
				if (isPoolRefusal(error)) {
					yield Kind.SATURATED;
				}
				// Refused, unreachable, unresolvable, connect timeout, TLS handshake:
				// each an IOException (ConnectException, UnknownHostException,
				// SSLException...), or the socket's own error.
				yield isSocketError(error) ? Kind.CONNECT_FAILED : Kind.NOT_UPSTREAM;
			}
			case SENDING -> isConnectionError(error) ? Kind.CONNECTION_LOST : Kind.NOT_UPSTREAM;
			case AWAITING_HEADERS -> {
				if (causedBy(error, ReadTimeoutException.class)) {
					yield Kind.TIMEOUT;
				}
				yield isConnectionError(error) ? Kind.CONNECTION_LOST : Kind.NOT_UPSTREAM;
			}
			case RECEIVING -> (causedBy(error, ReadTimeoutException.class) || isConnectionError(error))
					? Kind.BODY_FAILED : Kind.NOT_UPSTREAM;
		};
	}

	/**
	 * Classifies an answer by its status.
	 * @param status the upstream's status
	 * @param failure whether passive health counts that status as a failure
	 * @return {@link Kind#SERVER_ERROR} for a failure status, else {@link Kind#SUCCESS}
	 * (provisionally: the body must still arrive whole)
	 */
	public static Kind ofStatus(int status, boolean failure) {
		return failure ? Kind.SERVER_ERROR : Kind.SUCCESS;
	}

	/**
	 * Returns whether {@code error} is a pool's refusal to hand out a connection: its
	 * pending queue is full, its pending timeout passed, or it is closing. Reactor Netty
	 * shades reactor-pool's exceptions into its own package, whose types are imported
	 * here: a Reactor Netty upgrade that moves them fails the build, not the
	 * classification.
	 * @param error the error
	 * @return whether the pool refused
	 */
	public static boolean isPoolRefusal(Throwable error) {
		for (Throwable t = error; t != null; t = t.getCause()) {
			if (t instanceof PoolAcquirePendingLimitException || t instanceof PoolAcquireTimeoutException
					|| t instanceof PoolShutdownException) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether {@code error} is a pool's refusal because it is closing: its
	 * endpoint left discovery, or a refresh replaced the service's pools.
	 * @param error the error
	 * @return whether the pool was closing
	 */
	public static boolean isPoolClosing(Throwable error) {
		return causedBy(error, PoolShutdownException.class);
	}

	/**
	 * Returns whether {@code error} says the connection broke: an error of its socket,
	 * Reactor Netty's aborted connection, or a closed channel; or a WebSocket handshake
	 * that broke off (the connection closed before the answer, an answer that is no valid
	 * handshake). A handshake the endpoint refused with a status is an answer, judged by
	 * its status before it gets here.
	 */
	private static boolean isConnectionError(Throwable error) {
		return isSocketError(error) || causedBy(error, AbortedException.class)
				|| causedBy(error, WebSocketHandshakeException.class);
	}

	/**
	 * Returns whether {@code error} is what a socket call reported: an I/O error, or
	 * {@code ENOTCONN}, which Netty's native transports (as the JDK's) raise as a
	 * {@link NotYetConnectedException}, an {@code IllegalStateException}. A gateway's
	 * upstream socket can report it after its connection went away (seen on epoll in
	 * {@code HedgeIT}); it is the connection's failure like any other, not a bug of ours
	 * to answer with a 500.
	 */
	private static boolean isSocketError(Throwable error) {
		return causedBy(error, IOException.class) || causedBy(error, NotYetConnectedException.class);
	}

	private static boolean causedBy(Throwable error, Class<? extends Throwable> type) {
		for (Throwable t = error; t != null; t = t.getCause()) {
			if (type.isInstance(t)) {
				return true;
			}
		}
		return false;
	}

}
