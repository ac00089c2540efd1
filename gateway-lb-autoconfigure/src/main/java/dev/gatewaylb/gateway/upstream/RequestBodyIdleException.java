package dev.gatewaylb.gateway.upstream;

import java.time.Duration;

/**
 * Signalled in place of the rest of a request body when the client sent nothing for
 * {@code timeouts.request-body-idle}: the client's doing, charged to no endpoint
 * ({@link Outcome.Kind#REQUEST_BODY_IDLE}).
 * <p>
 * Deliberately neither an {@link java.io.IOException} nor a Netty timeout, which
 * {@link Outcome#classify} reads as the endpoint's failure. Carries no stack trace: where
 * it comes from is known, and a client that trickles on purpose should not make the
 * gateway fill stack traces.
 */
public final class RequestBodyIdleException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param idle the idle limit that passed
	 */
	public RequestBodyIdleException(Duration idle) {
		super("request body idle for " + idle.toMillis() + " ms", null, false, false);
	}

}
