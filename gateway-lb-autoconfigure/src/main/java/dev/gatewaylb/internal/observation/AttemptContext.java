package dev.gatewaylb.internal.observation;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What the {@code gateway.lb.attempt} observation of one attempt knows: set when the
 * attempt is picked, but its outcome and reason, set when it ends. The convention reads
 * it when the observation stops.
 * <p>
 * Written by the exchange's steps and read when the attempt's claim ends, on whichever
 * thread ends it; the observation's start and stop order those writes and reads (a
 * handler sees the context after the stop that publishes it).
 */
public final class AttemptContext extends Observation.Context {

	/** The first attempt of an exchange. */
	public static final String FIRST = "first";

	/** An attempt after one that failed, or after a route's own {@code Retry} filter. */
	public static final String RETRY = "retry";

	/** An attempt after one whose pool closed under it: nothing left the gateway. */
	public static final String RE_PICK = "re-pick";

	/** The backup of a hedged round. */
	public static final String HEDGE = "hedge";

	/** A copy of the request sent to a shadow service. */
	public static final String MIRROR = "mirror";

	private final String service;

	private final String algorithm;

	private final String kind;

	private final String endpoint;

	private final int number;

	private final @Nullable String splitTarget;

	private final @Nullable String rollout;

	private @Nullable String reason;

	private String outcome = "cancelled";

	/**
	 * Creates the context of one attempt.
	 * @param service the service
	 * @param algorithm the service's balancing algorithm, as configured
	 * @param kind {@link #FIRST}, {@link #RETRY}, {@link #RE_PICK}, {@link #HEDGE} or
	 * {@link #MIRROR}
	 * @param endpoint the endpoint, {@code host:port}, or empty for none (a shed request)
	 * @param number the attempt's number in its exchange, from 1
	 * @param splitTarget the split's target, or {@code null} for a request to a service
	 * @param rollout the rollout's id and step, or {@code null}
	 * @param reason why an endpoint was skipped, or the request waited, or {@code null}
	 */
	public AttemptContext(String service, String algorithm, String kind, String endpoint, int number,
			@Nullable String splitTarget, @Nullable String rollout, @Nullable String reason) {
		this.service = service;
		this.algorithm = algorithm;
		this.kind = kind;
		this.endpoint = endpoint;
		this.number = number;
		this.splitTarget = splitTarget;
		this.rollout = rollout;
		this.reason = reason;
	}

	public String service() {
		return this.service;
	}

	public String algorithm() {
		return this.algorithm;
	}

	public String kind() {
		return this.kind;
	}

	public String endpoint() {
		return this.endpoint;
	}

	public int number() {
		return this.number;
	}

	public @Nullable String splitTarget() {
		return this.splitTarget;
	}

	public @Nullable String rollout() {
		return this.rollout;
	}

	public @Nullable String reason() {
		return this.reason;
	}

	/**
	 * Returns how the attempt ended: {@code success}, {@code failure}, {@code cancelled}
	 * or {@code shed}.
	 */
	public String outcome() {
		return this.outcome;
	}

	/**
	 * Says how the attempt ended, and why if the reason is new; before the stop.
	 * @param outcome {@code success}, {@code failure}, {@code cancelled} or {@code shed}
	 * @param reason why, or {@code null} to keep the reason the attempt started with
	 */
	public void ended(String outcome, @Nullable String reason) {
		this.outcome = outcome;
		if (reason != null && this.reason == null) {
			this.reason = reason;
		}
	}

}
