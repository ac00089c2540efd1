package dev.gatewaylb.internal.hedging.core;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.PackedHistogram;
import org.HdrHistogram.Recorder;
import org.jspecify.annotations.Nullable;

/**
 * How long an attempt of one service waits before it gets a backup: the service's own
 * recent latency at the percentile {@code 1 - max-extra-load}, over a sliding window of
 * {@value #WINDOW_INTERVALS} intervals, never shorter than {@code hedge.min-delay}. With
 * {@code max-extra-load: 0.05} only the slowest 5% of attempts wait that long, so about
 * that share of requests gets a backup before the budget is even asked.
 * <p>
 * Attempts record their latency from any thread into an HdrHistogram {@link Recorder}:
 * wait-free, three atomic increments, no lock and no allocation. Once an interval, one
 * thread (the control thread, never an event loop) takes the interval's histogram, adds
 * it to the window, subtracts the interval that left it, and publishes the percentile in
 * one volatile field, which the request path reads. Until the window holds
 * {@link #minSamples(double)} samples the delay is unknown and nothing is hedged: a
 * percentile of a handful of samples is noise.
 * <p>
 * Values are microseconds, two significant digits, up to {@value #MAX_MICROS} µs (a
 * minute, twice the default {@code timeouts.response}).
 */
public final class HedgeDelay {

	/**
	 * Intervals in the window: with the control thread's one-second interval, ten
	 * seconds.
	 */
	public static final int WINDOW_INTERVALS = 10;

	/**
	 * The longest latency the histogram tells apart, a minute; longer ones count as this.
	 */
	static final long MAX_MICROS = 60_000_000L;

	private static final int DIGITS = 2;

	/**
	 * The delay while the window has too few samples.
	 */
	public static final long UNKNOWN = -1;

	private final double maxExtraLoad;

	private final long minDelayNanos;

	private final long minSamples;

	/**
	 * Fixed range on purpose: a concurrent histogram that resizes itself (packed or
	 * auto-resizing) can spin forever when writers on several threads grow it at once, as
	 * HdrHistogram 2.2.2's packed recorder does under three writers within seconds; an
	 * event loop stuck in it hangs every connection it owns. Two such histograms (the
	 * recorder's pair) are 20 KB each.
	 */
	private final Recorder recorder = new Recorder(1, MAX_MICROS, DIGITS);

	/**
	 * The last interval taken from the recorder, handed back to it at the next roll.
	 */
	private @Nullable Histogram interval;

	/**
	 * The window's intervals, as packed (sparse) copies: a service whose latencies
	 * cluster keeps a few kilobytes for each. Touched by the rolling thread only.
	 */
	private final Histogram[] intervals = new Histogram[WINDOW_INTERVALS];

	private final Histogram window = new PackedHistogram(1, MAX_MICROS, DIGITS);

	private int next;

	private volatile long delayNanos = UNKNOWN;

	private volatile long samplesInWindow;

	/**
	 * Creates the delay of a service that hedges.
	 * @param maxExtraLoad backups as a fraction of requests, above 0 and at most 1
	 * @param minDelayNanos the shortest delay
	 */
	public HedgeDelay(double maxExtraLoad, long minDelayNanos) {
		if (!(maxExtraLoad > 0 && maxExtraLoad <= 1)) {
			throw new IllegalArgumentException("maxExtraLoad: " + maxExtraLoad + " (expected: above 0, at most 1)");
		}
		this.maxExtraLoad = maxExtraLoad;
		this.minDelayNanos = minDelayNanos;
		this.minSamples = minSamples(maxExtraLoad);
	}

	/**
	 * Returns how many samples the window must hold before its percentile is believed:
	 * enough that ten of them lie beyond it ({@code 10 / max-extra-load}, 200 for p95),
	 * and never fewer than 20.
	 * @param maxExtraLoad backups as a fraction of requests
	 * @return the samples
	 */
	public static long minSamples(double maxExtraLoad) {
		return Math.max(20, (long) Math.ceil(10 / maxExtraLoad - 1e-9));
	}

	/**
	 * Records how long an attempt waited for its response headers, or, for an attempt
	 * cancelled because its backup answered first, how long it had waited by then (a
	 * lower bound, and the honest part of what is known). Any thread; wait-free.
	 * @param latencyNanos the latency
	 */
	public void record(long latencyNanos) {
		this.recorder.recordValue(Math.min(MAX_MICROS, Math.max(1, latencyNanos / 1_000)));
	}

	/**
	 * Closes the current interval: it joins the window, the oldest interval leaves it,
	 * and the delay is computed again. Called by one thread at a time, once an interval.
	 */
	public void roll() {
		int slot = this.next;
		Histogram interval = this.recorder.getIntervalHistogram(this.interval);
		this.interval = interval;
		Histogram copy = this.intervals[slot];
		if (copy == null) {
			copy = new PackedHistogram(1, MAX_MICROS, DIGITS);
			this.intervals[slot] = copy;
		}
		else {
			// The interval leaving the window: its copy is reused for the one joining.
			this.window.subtract(copy);
			copy.reset();
		}
		copy.add(interval);
		this.window.add(copy);
		this.next = (slot + 1) % WINDOW_INTERVALS;
		this.samplesInWindow = this.window.getTotalCount();
		this.delayNanos = (this.samplesInWindow < this.minSamples) ? UNKNOWN
				: Math.max(this.minDelayNanos, this.window.getValueAtPercentile(100 * (1 - this.maxExtraLoad)) * 1_000);
	}

	/**
	 * Returns how long an attempt waits before its backup: one volatile read.
	 * @return the delay in nanoseconds, or {@link #UNKNOWN} while the window has too few
	 * samples
	 */
	public long delayNanos() {
		return this.delayNanos;
	}

	/**
	 * Returns the samples in the window, as of the last {@link #roll()}.
	 * @return the count
	 */
	public long samplesInWindow() {
		return this.samplesInWindow;
	}

	/**
	 * Returns the fraction of requests this delay is meant to hedge.
	 * @return {@code max-extra-load}
	 */
	public double maxExtraLoad() {
		return this.maxExtraLoad;
	}

}
