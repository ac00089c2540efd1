package dev.gatewaylb.internal.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One pick's claim on an endpoint: the endpoint's in-flight count stays raised until
 * {@link #release()}, which takes effect exactly once however many times and from however
 * many threads it is called (completion, error and cancellation may race).
 * <p>
 * The guard holds the endpoint's {@link EndpointState} itself, not an index into a
 * snapshot, so the release lands on the right counter even after a rebuild swapped the
 * snapshot the pick came from.
 * <p>
 * Open for extension so that a caller's per-request object can be the guard itself
 * ({@link Snapshot#claim(int)}): one allocation per pick instead of two.
 */
public class InFlightGuard {

	private static final VarHandle RELEASED;

	static {
		try {
			RELEASED = MethodHandles.lookup().findVarHandle(InFlightGuard.class, "released", boolean.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final EndpointState endpoint;

	private final long decayNanos;

	/**
	 * When the latency sample starts; written once by the thread that sends the request,
	 * read by the one that sees the answer, after a happens-before edge of the reactive
	 * chain in between.
	 */
	private long startNanos;

	@SuppressWarnings("unused") // accessed through RELEASED
	private volatile boolean released;

	/**
	 * Creates the guard of an endpoint whose in-flight count {@link Snapshot} has just
	 * raised.
	 * @param endpoint the endpoint's state
	 * @param decayNanos the peak-EWMA decay of the endpoint's service
	 */
	protected InFlightGuard(EndpointState endpoint, long decayNanos) {
		this.endpoint = endpoint;
		this.decayNanos = decayNanos;
	}

	/**
	 * Returns the state of the endpoint this guard holds.
	 * @return the endpoint's state
	 */
	public EndpointState endpoint() {
		return this.endpoint;
	}

	/**
	 * Starts the latency sample: the request leaves for the endpoint now.
	 * @param nowNanos the balancer clock's current time
	 */
	public void start(long nowNanos) {
		this.startNanos = nowNanos;
	}

	/**
	 * Returns when the latency sample started.
	 * @return the balancer clock's time at {@link #start}, or 0 if it never started
	 */
	public long startNanos() {
		return this.startNanos;
	}

	/**
	 * Records the time from {@link #start} to {@code nowNanos} as a latency sample of the
	 * endpoint, for peak EWMA, the locality spill and, when
	 * {@link #feedsLatencyEjection()}, latency-based ejection.
	 * @param nowNanos the balancer clock's current time, when the response headers
	 * arrived
	 */
	public void recordLatency(long nowNanos) {
		long latencyNanos = nowNanos - this.startNanos;
		this.endpoint.latency.observe(latencyNanos, nowNanos, this.decayNanos);
		this.endpoint.addLatencySample(latencyNanos, feedsLatencyEjection());
	}

	/**
	 * Returns whether this request's latency is a sample of latency-based ejection:
	 * always, unless a subclass knows better (a request the client steered to its
	 * endpoint is not the balancer's sample of it).
	 * @return whether it feeds latency-based ejection
	 */
	protected boolean feedsLatencyEjection() {
		return true;
	}

	/**
	 * Records a failed attempt (connect error, reset, timeout) for peak EWMA: the
	 * endpoint's latency average becomes at least {@code floorNanos}. A failure that is
	 * fast must not make an endpoint look fast.
	 * @param floorNanos the latency a failure counts as at least
	 * @param nowNanos the balancer clock's current time
	 */
	public void recordFailure(long floorNanos, long nowNanos) {
		this.endpoint.latency.observeFailure(Math.max(floorNanos, nowNanos - this.startNanos), nowNanos);
	}

	/**
	 * Lowers the endpoint's in-flight count, the first time only.
	 * @return whether this call released the guard
	 */
	public final boolean release() {
		if (RELEASED.compareAndSet(this, false, true)) {
			this.endpoint.release();
			released();
			return true;
		}
		return false;
	}

	/**
	 * Called once, by the {@link #release()} that released the guard: a subclass that
	 * counts the request elsewhere too lowers that count here.
	 */
	protected void released() {
	}

	/**
	 * Returns whether the guard has been released.
	 * @return whether released
	 */
	public boolean isReleased() {
		return this.released;
	}

}
