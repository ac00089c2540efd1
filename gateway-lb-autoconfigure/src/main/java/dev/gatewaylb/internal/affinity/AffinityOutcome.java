package dev.gatewaylb.internal.affinity;

/**
 * What became of a request's endpoint affinity ({@code affinity.cookie}), counted once
 * per request in {@code gateway.lb.affinity{outcome}}.
 */
public enum AffinityOutcome {

	/**
	 * Its valid cookie named an endpoint that answered it.
	 */
	FOLLOWED("followed"),

	/**
	 * It had no cookie: the service's algorithm picked, and a cookie was issued.
	 */
	NEW("new"),

	/**
	 * Its valid cookie named an endpoint that could not take it (gone, ejected, failing
	 * its checks, at its concurrency limit, above {@code affinity.max-load-factor} times
	 * the service's average in flight), or a retry or a backup left that endpoint: the
	 * session moved and the cookie was issued again.
	 */
	MOVED("moved"),

	/**
	 * Its cookie was not one this service signed (tampered with, of another service, or
	 * of a secret no longer accepted): ignored, a fresh pick.
	 */
	REJECTED("rejected"),

	/**
	 * Its cookie was signed, but longer ago than the cookie's lifetime ({@code max-age},
	 * a day for a session cookie): a fresh pick and a fresh cookie, so that a value
	 * copied to other clients stops working.
	 */
	EXPIRED("expired");

	private final String tag;

	AffinityOutcome(String tag) {
		this.tag = tag;
	}

	/**
	 * Returns the value of the meter's {@code outcome} tag.
	 * @return the tag
	 */
	public String tag() {
		return this.tag;
	}

}
