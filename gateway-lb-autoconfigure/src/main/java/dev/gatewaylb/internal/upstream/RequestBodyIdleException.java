package dev.gatewaylb.internal.upstream;

import java.time.Duration;

/**
 * Signalled in place of the rest of a request body when the client sent nothing for
 * {@code timeouts.request-body-idle}, or sent it slower than
 * {@code timeouts.request-body-min-rate}: the client's doing, charged to no endpoint
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
		this("request body idle for " + idle.toMillis() + " ms");
	}

	private RequestBodyIdleException(String message) {
		super(message, null, false, false);
	}

	/**
	 * Returns the exception of a body slower than the minimum rate.
	 * @param bytes what the client sent
	 * @param activeNanos the time it had, the endpoint's pauses left out
	 * @param minRate the minimum, in bytes per second
	 * @return the exception
	 */
	public static RequestBodyIdleException belowRate(long bytes, long activeNanos, long minRate) {
		return new RequestBodyIdleException("request body of " + bytes + " bytes in " + activeNanos / 1_000_000
				+ " ms, below " + minRate + " bytes per second after the grace");
	}

}
