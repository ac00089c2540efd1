package dev.gatewaylb.overload;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * The partitions of one service's concurrency limit ({@code concurrency.partitions}), as
 * Netflix's partitioned limiter shares one: each partition is guaranteed its share of the
 * service's limit (at least one request), and the rest, what the shares leave, is the
 * share of requests of no listed partition. A request of a partition under its share is
 * admitted even when every endpoint is at its limit; one over it only while the service
 * is under its limit and an endpoint has room, so shedding starts with the partitions
 * over their shares, and a partition may use what the others leave idle.
 * <p>
 * Thread-safe without locks: one atomic counter of requests in flight per partition, and
 * the service's limit, which the control thread writes. A partition's count may pass its
 * share by the picks that read it at once, as the endpoints' limits may.
 */
public final class Partitions {

	/**
	 * One partition, the rest, with every share: a service that partitions nothing.
	 */
	public static final Partitions NONE = of(Map.of());

	private final String[] names;

	/**
	 * Each partition's share, the rest's last.
	 */
	private final double[] shares;

	private final AtomicInteger[] inFlight;

	private final Map<String, Double> configured;

	private volatile long serviceLimit;

	private Partitions(Map<String, Double> configured) {
		Map<String, Double> sorted = new TreeMap<>(configured);
		this.configured = Map.copyOf(configured);
		this.names = sorted.keySet().toArray(new String[0]);
		this.shares = new double[this.names.length + 1];
		this.inFlight = new AtomicInteger[this.names.length + 1];
		double sum = 0;
		for (int i = 0; i < this.names.length; i++) {
			this.shares[i] = sorted.get(this.names[i]);
			sum += this.shares[i];
		}
		this.shares[this.names.length] = Math.max(0, 1 - sum);
		for (int i = 0; i < this.inFlight.length; i++) {
			this.inFlight[i] = new AtomicInteger();
		}
	}

	/**
	 * Makes the partitions of a service.
	 * @param shares each partition's share by name, each above 0, summing to at most 1
	 * @return the partitions
	 */
	public static Partitions of(Map<String, Double> shares) {
		return new Partitions(shares);
	}

	/**
	 * Returns the index of a request's partition: the partition of that name, or the
	 * rest. Compares with each name, of which there are a few: no allocation.
	 * @param name the request's partition value, or {@code null}
	 * @return the index
	 */
	public int indexOf(@Nullable CharSequence name) {
		if (name != null) {
			for (int i = 0; i < this.names.length; i++) {
				if (this.names[i].contentEquals(name)) {
					return i;
				}
			}
		}
		return this.names.length;
	}

	/**
	 * Returns whether partition {@code index} has fewer requests in flight than its share
	 * of the service's limit, so that it may go over the endpoints' limits. Before the
	 * first limit is known every partition is under its share.
	 * @param index a partition's index
	 * @return whether under its share
	 */
	public boolean underShare(int index) {
		long limit = this.serviceLimit;
		return limit == 0 || this.inFlight[index].get() < share(index, limit);
	}

	/**
	 * Returns whether a request of partition {@code index}, which is past its share, may
	 * take a place: while the requests in flight, all partitions together, are fewer than
	 * the service's limit, or while another partition is further past its own share (by
	 * the ratio of its requests in flight to its share). A partition may so borrow what
	 * the others leave unused, as in Netflix's partitioned limiter, and gives it back by
	 * being shed first: the one furthest past its share is turned away while the others
	 * are admitted past the limit, and its borrowed places go as its requests end. A
	 * partition under its share is always admitted ({@link #underShare}). Reads each
	 * partition's count once (there are a few).
	 * @param index a partition's index
	 * @return whether it may take a place
	 */
	public boolean hasSpare(int index) {
		long limit = this.serviceLimit;
		if (limit == 0) {
			return true;
		}
		long own = this.inFlight[index].get();
		long ownShare = share(index, limit);
		long taken = 0;
		boolean anotherFurtherPast = false;
		for (int i = 0; i < this.inFlight.length; i++) {
			long count = (i == index) ? own : this.inFlight[i].get();
			taken += count;
			if (i != index) {
				long share = share(i, limit);
				// count / share > own / ownShare, multiplied out; a partition of no share
				// with requests in flight is past any that has one.
				anotherFurtherPast |= (share == 0) ? (count > 0 && ownShare > 0)
						: (count > share && count * ownShare > own * share);
			}
		}
		return taken < limit || anotherFurtherPast;
	}

	private long share(int index, long limit) {
		double share = this.shares[index];
		// Less a hair, so that a share such as 1 - 0.9 (0.10000000000000009) of 100 is
		// 10.
		return (share == 0) ? 0 : Math.max(1, (long) Math.ceil(share * limit - 1e-9));
	}

	/**
	 * Counts a request of partition {@code index} in flight.
	 * @param index a partition's index
	 */
	public void acquire(int index) {
		this.inFlight[index].incrementAndGet();
	}

	/**
	 * Counts a request of partition {@code index} done.
	 * @param index a partition's index
	 */
	public void release(int index) {
		this.inFlight[index].decrementAndGet();
	}

	/**
	 * Sets the service's limit, the sum of its endpoints' limits: the control thread
	 * writes it.
	 * @param limit the limit, 0 while none is known
	 */
	public void serviceLimit(long limit) {
		this.serviceLimit = limit;
	}

	/**
	 * Returns the shares as configured, to tell whether a refresh changed them.
	 * @return the shares by name
	 */
	public Map<String, Double> configured() {
		return this.configured;
	}

	/**
	 * Returns each partition as the actuator shows it, the rest last (named
	 * {@code null}).
	 * @return the partitions
	 */
	public List<Partition> report() {
		long limit = this.serviceLimit;
		List<Partition> report = new ArrayList<>(this.shares.length);
		for (int i = 0; i < this.shares.length; i++) {
			report.add(new Partition((i < this.names.length) ? this.names[i] : null, this.shares[i],
					(limit == 0) ? 0 : share(i, limit), this.inFlight[i].get()));
		}
		return report;
	}

	/**
	 * Returns the service's limit as last published.
	 * @return the limit, 0 while none is known
	 */
	public long serviceLimit() {
		return this.serviceLimit;
	}

	/**
	 * One partition as reported.
	 *
	 * @param name its name, {@code null} for the rest
	 * @param share its share of the limit
	 * @param guaranteed the requests in flight its share guarantees now
	 * @param inFlight its requests in flight
	 */
	public record Partition(@Nullable String name, double share, long guaranteed, int inFlight) {
	}

}
