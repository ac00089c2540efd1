package dev.gatewaylb.internal.overload.core;

import com.netflix.concurrency.limits.Limit;
import dev.gatewaylb.internal.balance.EndpointState;

/**
 * The concurrency limiter of one endpoint: a Netflix {@link Limit} fed, window by window,
 * from the samples the request path adds ({@link LimitSamples}), and the limit it sets
 * written to the endpoint's state for the picks to read.
 * <p>
 * Windows: a window closes once it has {@value #MIN_WINDOW_SAMPLES} samples when the
 * control thread looks (every tenth of a second), or after {@link #MAX_WINDOW_NANOS} with
 * at least one, and gives the limit one sample: the window's average time to the response
 * headers, the most requests in flight a sample saw, and whether any request was dropped.
 * Netflix's {@code WindowedLimit} needs the same ten samples but keeps a window open for
 * a second at least; a tenth lets a limit follow an overload within a second (its
 * Gradient2 parameters are set for that, {@link ConcurrencyLimits}). Unlike
 * {@code WindowedLimit}, the request path neither allocates a window per sample nor takes
 * its lock: it adds to the endpoint's {@link java.util.concurrent.atomic.LongAdder}s, and
 * the control thread, the only caller of {@link #update}, reads them. The limit's own
 * {@code synchronized} is then never contended.
 */
public final class EndpointLimiter {

	/**
	 * Samples that close a window: Netflix's {@code WindowedLimit} default.
	 */
	static final int MIN_WINDOW_SAMPLES = 10;

	/**
	 * The longest a window with a sample stays open: {@code WindowedLimit}'s default.
	 */
	static final long MAX_WINDOW_NANOS = 1_000_000_000L;

	private final ConcurrencyLimits limits;

	private final Limit limit;

	private long samplesBase;

	private long rttBase;

	private long dropsBase;

	private long windowStartNanos;

	private int windowMaxInFlight;

	/**
	 * The last window's average time, for a window of drops only (which carry no time).
	 */
	private long lastRttNanos;

	/**
	 * Makes the limiter of an endpoint, starting from its sums as they are.
	 * @param limits the service's limits, enabled
	 * @param samples the endpoint's samples, as the request path adds them
	 * @param state the endpoint's state
	 * @param nowNanos the control thread's clock
	 */
	public EndpointLimiter(ConcurrencyLimits limits, LimitSamples samples, EndpointState state, long nowNanos) {
		this.limits = limits;
		this.limit = limits.newLimit();
		this.samplesBase = samples.samples();
		this.rttBase = samples.rttNanos();
		this.dropsBase = samples.drops();
		this.windowStartNanos = nowNanos;
		samples.takeMaxInFlight();
		state.concurrencyLimit(limits.bounded(this.limit.getLimit()));
	}

	/**
	 * Closes the endpoint's window if it is full or old enough, gives its sample to the
	 * limit, and writes the limit to the state. Control thread only.
	 * @param window the endpoint's samples, the ones this limiter was made with
	 * @param state the endpoint's state, the one this limiter was made for
	 * @param nowNanos the control thread's clock
	 * @return the endpoint's limit
	 */
	public int update(LimitSamples window, EndpointState state, long nowNanos) {
		this.windowMaxInFlight = Math.max(this.windowMaxInFlight, window.takeMaxInFlight());
		long samples = window.samples() - this.samplesBase;
		long drops = window.drops() - this.dropsBase;
		boolean old = nowNanos - this.windowStartNanos >= MAX_WINDOW_NANOS;
		if (samples >= MIN_WINDOW_SAMPLES || (old && samples + drops > 0)) {
			long rttSum = window.rttNanos();
			long rtt = (samples > 0) ? (rttSum - this.rttBase) / samples : this.lastRttNanos;
			if (rtt > 0) {
				this.limit.onSample(this.windowStartNanos, rtt, this.windowMaxInFlight, drops > 0);
				this.lastRttNanos = rtt;
			}
			this.samplesBase += samples;
			this.rttBase = rttSum;
			this.dropsBase += drops;
			this.windowStartNanos = nowNanos;
			this.windowMaxInFlight = 0;
		}
		else if (old) {
			// An idle window: nothing to say, start the next one now.
			this.windowStartNanos = nowNanos;
			this.windowMaxInFlight = 0;
		}
		int bounded = this.limits.bounded(this.limit.getLimit());
		state.concurrencyLimit(bounded);
		return bounded;
	}

	/**
	 * Returns the limits this limiter was made with.
	 * @return the limits
	 */
	public ConcurrencyLimits limits() {
		return this.limits;
	}

}
