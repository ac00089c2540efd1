package dev.gatewaylb.rollout;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.jspecify.annotations.Nullable;

/**
 * What one side of a rollout's comparison (the target, or the split's other targets) did
 * since its step began: requests, failures and a latency histogram.
 * <p>
 * Attempts record from any event loop: two {@link LongAdder} increments and a wait-free
 * {@link Recorder} write, no lock, no allocation. The control thread alone drains the
 * recorder into the step's histogram ({@link #drain()}) and resets it when a step begins,
 * so the histogram needs no guard. The recorder has a fixed range (1 µs to a minute) for
 * the reason {@code HedgeDelay} gives: HdrHistogram's self-resizing recorder can spin
 * forever under concurrent writers.
 */
public final class RolloutWindow {

	private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(1);

	private final LongAdder requests = new LongAdder();

	private final LongAdder errors = new LongAdder();

	private final Rollout.Plan plan;

	private final Recorder recorder = new Recorder(1, MAX_MICROS, 2);

	private final Histogram step = new Histogram(1, MAX_MICROS, 2);

	/**
	 * The recorder's last interval, handed back to it for reuse: one of its own, so none
	 * until the first drain.
	 */
	private @Nullable Histogram interval;

	RolloutWindow(Rollout.Plan plan) {
		this.plan = plan;
	}

	/**
	 * Records what an attempt's answer was, when its headers arrive: an error when the
	 * plan's {@code error-statuses} count its status, else a success with its latency.
	 * The latency ends at the headers, not at the body's end, so that a client that reads
	 * slowly cannot make a healthy canary look slow.
	 * @param status the answer's status
	 * @param latencyNanos from sending the request to the response's headers
	 */
	public void answered(int status, long latencyNanos) {
		if (this.plan.isError(status)) {
			failed();
		}
		else {
			succeeded(latencyNanos);
		}
	}

	/**
	 * Records an answered attempt.
	 * @param latencyNanos from sending the request to the response's headers
	 */
	public void succeeded(long latencyNanos) {
		this.requests.increment();
		this.recorder.recordValue(Math.min(Math.max(latencyNanos / 1000, 1), MAX_MICROS));
	}

	/**
	 * Records an attempt that failed: an error status, a connection failure, a timeout,
	 * or the gateway's own answer for the side (no endpoint to pick, a full pool). Its
	 * latency is not recorded: the failure is judged by the error rate.
	 */
	public void failed() {
		this.requests.increment();
		this.errors.increment();
	}

	/**
	 * Moves what the recorder holds into the step's histogram. Control thread only.
	 */
	void drain() {
		this.interval = this.recorder.getIntervalHistogram(this.interval);
		this.step.add(this.interval);
	}

	/**
	 * Forgets everything: a step begins. Control thread only. A request that was
	 * recording while this runs may land on either side of the reset, which a judgement
	 * over a whole interval does not feel.
	 */
	void reset() {
		this.requests.reset();
		this.errors.reset();
		this.recorder.reset();
		this.step.reset();
	}

	/**
	 * Returns what this side did since its step began, as drained last. Control thread
	 * only.
	 * @return the window
	 */
	Rollout.Window window() {
		long p99 = (this.step.getTotalCount() > 0) ? this.step.getValueAtPercentile(99) * 1000 : 0;
		return new Rollout.Window(this.requests.sum(), this.errors.sum(), p99);
	}

}
