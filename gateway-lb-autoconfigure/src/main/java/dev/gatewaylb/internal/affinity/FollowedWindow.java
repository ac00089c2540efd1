package dev.gatewaylb.internal.affinity;

import java.util.concurrent.atomic.LongAdder;

/**
 * The requests that followed an affinity cookie to one endpoint, over the last window:
 * added to on the request path, rolled by the control thread, which keeps the window in a
 * ring of sums only it touches and publishes the difference.
 */
final class FollowedWindow {

	private final LongAdder followed = new LongAdder();

	private long[] sums;

	private int at;

	private volatile long lastWindow;

	FollowedWindow(int slots) {
		// Zeros: the follows counted before the first step are in the window.
		this.sums = new long[slots];
	}

	/**
	 * Counts a request that followed its cookie here: one striped increment.
	 */
	void followed() {
		this.followed.increment();
	}

	/**
	 * Returns the follows of the last window.
	 */
	long lastWindow() {
		return this.lastWindow;
	}

	/**
	 * Moves the window on by one of its slots: called by one thread at a fixed interval,
	 * so that the window covers as many intervals as it has slots.
	 */
	void roll() {
		long now = this.followed.sum();
		long windowAgo = this.sums[this.at];
		this.sums[this.at] = now;
		this.at = (this.at + 1) % this.sums.length;
		this.lastWindow = now - windowAgo;
	}

}
