package dev.gatewaylb.internal.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * One service's mirroring as it goes: how many mirrored requests are in flight, what
 * became of each, and the last mismatches. Carried from each of the service's runtimes to
 * the next, as its counters are. Thread-safe without a lock: counters are
 * {@link LongAdder}s, the in-flight count one atomic, the mismatches a ring of slots
 * written by one increment and one set.
 */
public final class MirrorState {

	/**
	 * How many mismatches the state remembers.
	 */
	public static final int RECENT = 20;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final LongAdder matched = new LongAdder();

	private final LongAdder mismatched = new LongAdder();

	private final LongAdder failed = new LongAdder();

	private final LongAdder dropped = new LongAdder();

	private final AtomicLong mismatches = new AtomicLong();

	private final AtomicReferenceArray<Mismatch> recent = new AtomicReferenceArray<>(RECENT);

	/**
	 * Takes a place for one more mirrored request, unless {@code max} are in flight.
	 * @param max the most in flight
	 * @return whether a place was taken; when not, the request is counted as dropped
	 */
	public boolean tryAcquire(int max) {
		while (true) {
			int now = this.inFlight.get();
			if (now >= max) {
				this.dropped.increment();
				return false;
			}
			if (this.inFlight.compareAndSet(now, now + 1)) {
				return true;
			}
		}
	}

	/**
	 * Gives a place back.
	 */
	public void release() {
		this.inFlight.decrementAndGet();
	}

	/**
	 * Returns the mirrored requests in flight.
	 * @return the count
	 */
	public int inFlight() {
		return this.inFlight.get();
	}

	/**
	 * Counts a request not mirrored: no place, a body too large or of unknown length, no
	 * shadow to send it to.
	 */
	public void dropped() {
		this.dropped.increment();
	}

	/**
	 * Counts a mirrored request whose answer was compared and matched.
	 */
	public void matched() {
		this.matched.increment();
	}

	/**
	 * Counts a mirrored request that failed (no answer from the shadow, or none from the
	 * primary to compare it with).
	 */
	public void failed() {
		this.failed.increment();
	}

	/**
	 * Counts a mismatch and remembers it among the last {@value #RECENT}.
	 * @param mismatch what differed
	 */
	public void mismatched(Mismatch mismatch) {
		this.mismatched.increment();
		long slot = this.mismatches.getAndIncrement();
		this.recent.set((int) (slot % RECENT), mismatch);
	}

	/**
	 * Returns the last mismatches, oldest first.
	 * @return at most {@value #RECENT}
	 */
	public List<Mismatch> recent() {
		long next = this.mismatches.get();
		List<Mismatch> recent = new ArrayList<>(RECENT);
		for (long i = Math.max(0, next - RECENT); i < next; i++) {
			Mismatch mismatch = this.recent.get((int) (i % RECENT));
			if (mismatch != null) {
				recent.add(mismatch);
			}
		}
		return recent;
	}

	/**
	 * Returns the counter of mirrored requests whose answers matched.
	 * @return the counter
	 */
	public LongAdder matchedCounter() {
		return this.matched;
	}

	/**
	 * Returns the counter of mirrored requests whose answers differed.
	 * @return the counter
	 */
	public LongAdder mismatchedCounter() {
		return this.mismatched;
	}

	/**
	 * Returns the counter of mirrored requests without two answers to compare.
	 * @return the counter
	 */
	public LongAdder failedCounter() {
		return this.failed;
	}

	/**
	 * Returns the counter of requests not mirrored.
	 * @return the counter
	 */
	public LongAdder droppedCounter() {
		return this.dropped;
	}

	/**
	 * One mismatch: the two statuses, what differed, and the path (no query string).
	 *
	 * @param primaryStatus the primary's status
	 * @param shadowStatus the shadow's status
	 * @param bodyDiffers whether the statuses' classes matched but the bodies did not
	 * @param path the request's path
	 * @param atMillis when it was found, epoch milliseconds
	 */
	public record Mismatch(int primaryStatus, int shadowStatus, boolean bodyDiffers, String path, long atMillis) {
	}

}
