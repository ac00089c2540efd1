package dev.gatewaylb.internal.health;

import java.util.concurrent.atomic.AtomicReference;

import dev.gatewaylb.internal.balance.EndpointState;

/**
 * The ejections of one service's endpoints that have not ended yet, kept so that the
 * {@code max-ejection-percent} check and the ejection it allows are one atomic step. One
 * instance per service, for as long as its endpoint set lives.
 * <p>
 * Counting the ejected endpoints of a snapshot and then ejecting is a check-then-act
 * race: two endpoints that reach their threshold at once on two event loops both count
 * the same ejections, both pass, and together exceed the limit. Here every ejection is
 * first entered in an immutable table swapped by one compare-and-set; the limit is
 * checked against the table that the swap replaces. Two ejections that race both read the
 * same table, and only one swap succeeds; the other reads the new table, which holds the
 * winner, and checks again. So the table never holds more live entries than the limit
 * allows, and an endpoint is marked ejected only after its entry is in.
 * <p>
 * An ejection ends by time, so nothing has to release its entry: an entry past its end no
 * longer counts and is dropped by the next swap. An endpoint that leaves discovery while
 * ejected keeps its place until its ejection would have ended. Lock-free: a swap that
 * fails means another ejection succeeded. Allocates only when it ejects.
 */
public final class Ejections {

	private static final Entry[] NONE = {};

	private final AtomicReference<Entry[]> table = new AtomicReference<>(NONE);

	/**
	 * Runs after the check passed and before the entry is swapped in: a seam for tests
	 * that widen the race window. Does nothing in production.
	 */
	Runnable afterCheck = () -> {
	};

	/**
	 * Ejects {@code endpoint} until {@code untilNanos} if it is not ejected already and
	 * one more ejection keeps the ejected share within {@code maxEjectionPercent} of
	 * {@code setSize} endpoints; one endpoint may always be ejected, as in Envoy.
	 * @param endpoint the endpoint
	 * @param setSize how many endpoints the service has
	 * @param maxEjectionPercent the most of them that may be ejected at once
	 * @param nowNanos the balancer clock's current time
	 * @param untilNanos when the ejection ends
	 * @return whether this call ejected the endpoint
	 */
	public boolean eject(EndpointState endpoint, int setSize, int maxEjectionPercent, long nowNanos, long untilNanos) {
		while (true) {
			Entry[] seen = this.table.get();
			int live = 0;
			for (Entry entry : seen) {
				if (entry.isLive(nowNanos)) {
					if (entry.endpoint == endpoint) {
						// Another failure of the same endpoint got there first.
						return false;
					}
					live++;
				}
			}
			if (live > 0 && (live + 1) * 100L > (long) setSize * maxEjectionPercent) {
				return false;
			}
			this.afterCheck.run();
			Entry[] next = new Entry[live + 1];
			int n = 0;
			for (Entry entry : seen) {
				if (entry.isLive(nowNanos)) {
					next[n++] = entry;
				}
			}
			next[n] = new Entry(endpoint, untilNanos);
			// A fresh array each time: a swap cannot succeed against a table that was
			// replaced and then rebuilt equal (no ABA).
			if (this.table.compareAndSet(seen, next)) {
				// Nobody else holds a live entry for this endpoint, so nobody else marks
				// it now. The mark can only fail against a clock read a moment earlier
				// than the one that ended its last ejection; the entry then counts until
				// its end, which errs towards ejecting fewer.
				return endpoint.eject(nowNanos, untilNanos);
			}
		}
	}

	/**
	 * Returns how many ejections have not ended at {@code nowNanos}.
	 * @param nowNanos the balancer clock's current time
	 * @return the count of live ejections
	 */
	public int ejected(long nowNanos) {
		int live = 0;
		for (Entry entry : this.table.get()) {
			if (entry.isLive(nowNanos)) {
				live++;
			}
		}
		return live;
	}

	private record Entry(EndpointState endpoint, long untilNanos) {

		boolean isLive(long nowNanos) {
			return nowNanos - this.untilNanos < 0;
		}

	}

}
