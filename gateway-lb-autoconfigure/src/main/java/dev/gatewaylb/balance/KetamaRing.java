package dev.gatewaylb.balance;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Consistent hashing on a ketama ring: every endpoint owns {@value #POINTS_PER_WEIGHT}
 * points per unit of weight, and a key goes to the owner of the first point at or after
 * the key's hash, wrapping around. Adding one endpoint to n moves about 1/(n+1) of the
 * keys, all of them to the newcomer; keys never move between two endpoints that stayed.
 * <p>
 * The ring depends only on addresses and weights, never on the order discovery lists
 * them, so every replica and every restart maps a key to the same endpoint. Point
 * {@code v} of an endpoint is {@link StableHash} of the UTF-8 bytes of
 * {@code host:port#v} ({@code v} in decimal, from 0), a key's position is
 * {@link StableHash} of its UTF-8 bytes, and points are ordered as signed 64-bit
 * integers; equal points (a 64-bit collision) are ordered by address, then {@code v}.
 * <p>
 * A ring that would exceed {@value #MAX_POINTS} points gets fewer points per unit of
 * weight, the same factor for every endpoint (at least one point each). A request without
 * a key falls back to round-robin. Slow start does not apply: a ring that changed with
 * each ramp step would move keys, and stable keys are the point.
 *
 * @see <a href="https://github.com/RJ/ketama">ketama</a>
 */
final class KetamaRing implements Strategy {

	static final int POINTS_PER_WEIGHT = 160;

	static final int MAX_POINTS = 1 << 20;

	private final long[] points;

	private final int[] owners;

	private final Strategy withoutKey;

	/**
	 * {@code bucketStart[b]} is the first slot whose point falls in bucket {@code b} or a
	 * later one, buckets being the top {@link #bucketBits} bits of the point (as an
	 * unsigned number, which orders like the signed points). A lookup searches one
	 * bucket, a few adjacent points, instead of the whole ring: two cache misses instead
	 * of one per binary-search step.
	 */
	private final int[] bucketStart;

	private final int bucketBits;

	KetamaRing(Members members, Strategy withoutKey) {
		this.withoutKey = withoutKey;
		Endpoint[] endpoints = members.endpoints;
		long totalWeight = 0;
		for (int index : members.eligible) {
			totalWeight += endpoints[index].weight();
		}
		// Over the cap, every endpoint keeps its share: points = weight x a smaller
		// factor (at least one point each).
		double perWeight = Math.min(POINTS_PER_WEIGHT, (double) MAX_POINTS / Math.max(1, totalWeight));
		List<Point> ring = new ArrayList<>();
		for (int index : members.eligible) {
			String address = endpoints[index].address();
			long prefix = StableHash.fnv1a(StableHash.fnv1a(StableHash.FNV_OFFSET_BASIS, address), '#');
			long count = Math.max(1, Math.round(perWeight * endpoints[index].weight()));
			for (int v = 0; v < count; v++) {
				ring.add(new Point(StableHash.fmix64(StableHash.fnv1aDecimal(prefix, v)), address, v, index));
			}
		}
		ring.sort(
				Comparator.comparingLong(Point::position).thenComparing(Point::address).thenComparingInt(Point::vnode));
		this.points = new long[ring.size()];
		this.owners = new int[ring.size()];
		for (int i = 0; i < this.points.length; i++) {
			this.points[i] = ring.get(i).position();
			this.owners[i] = ring.get(i).owner();
		}
		// About one bucket per point, at most 2^16 (a 256 KiB index).
		this.bucketBits = Math.max(4, Math.min(16, 64 - Long.numberOfLeadingZeros(Math.max(1, this.points.length))));
		this.bucketStart = new int[(1 << this.bucketBits) + 1];
		int slot = 0;
		for (int bucket = 0; bucket <= (1 << this.bucketBits); bucket++) {
			while (slot < this.points.length && bucket(this.points[slot]) < bucket) {
				slot++;
			}
			this.bucketStart[bucket] = slot;
		}
	}

	private int bucket(long point) {
		return (int) ((point ^ Long.MIN_VALUE) >>> (64 - this.bucketBits));
	}

	@Override
	public int select(@Nullable CharSequence key) {
		if (key == null) {
			return this.withoutKey.select(null);
		}
		if (this.points.length == 0) {
			return -1;
		}
		return this.owners[ownerSlot(StableHash.hash(key))];
	}

	/**
	 * Returns the first slot whose point is {@code >= hash}, wrapping to 0.
	 */
	private int ownerSlot(long hash) {
		int bucket = bucket(hash);
		int low = this.bucketStart[bucket];
		int high = this.bucketStart[bucket + 1];
		while (low < high) {
			int mid = (low + high) >>> 1;
			if (this.points[mid] < hash) {
				low = mid + 1;
			}
			else {
				high = mid;
			}
		}
		return (low == this.points.length) ? 0 : low;
	}

	private record Point(long position, String address, int vnode, int owner) {
	}

}
