package dev.gatewaylb.gateway;

import org.springframework.http.HttpStatus;

/**
 * An attempt that got no usable response from the upstream, with the status the client
 * gets if it is not retried.
 */
public final class UpstreamFailure extends RuntimeException {

	private final HttpStatus status;

	private final String service;

	private final boolean beforeSending;

	/**
	 * Creates a failure.
	 * @param status the status to answer
	 * @param error what went wrong, as the body says it
	 * @param service the service id
	 * @param beforeSending whether the request never left the gateway (connect failure,
	 * saturated pool), so it can be sent again whatever its method
	 * @param cause the underlying exception
	 */
	public UpstreamFailure(HttpStatus status, String error, String service, boolean beforeSending, Throwable cause) {
		super(error, cause, false, false);
		this.status = status;
		this.service = service;
		this.beforeSending = beforeSending;
	}

	/**
	 * Returns the status the client gets if the attempt is not retried.
	 * @return the status
	 */
	public HttpStatus status() {
		return this.status;
	}

	/**
	 * Returns the service id.
	 * @return the service
	 */
	public String service() {
		return this.service;
	}

	/**
	 * Returns whether the request never left the gateway.
	 * @return whether it may be sent again whatever its method
	 */
	public boolean beforeSending() {
		return this.beforeSending;
	}

}
