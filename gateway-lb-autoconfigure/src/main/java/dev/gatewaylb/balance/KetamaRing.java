package dev.gatewaylb.balance;

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
		int total = 0;
		for (int index : members.eligible) {
			total += pointCount(perWeight, endpoints[index].weight());
		}
		// Parallel primitive arrays rather than one object per point: a 1,000-endpoint
		// ring has 160,000 points, and this runs on the thread of the request that first
		// sees a discovery change.
		long[] positions = new long[total];
		int[] owners = new int[total];
		int[] vnodes = new int[total];
		int slot = 0;
		for (int index : members.eligible) {
			long prefix = StableHash.fnv1a(StableHash.fnv1a(StableHash.FNV_OFFSET_BASIS, endpoints[index].address()),
					'#');
			int count = pointCount(perWeight, endpoints[index].weight());
			for (int v = 0; v < count; v++) {
				positions[slot] = StableHash.fmix64(StableHash.fnv1aDecimal(prefix, v));
				owners[slot] = index;
				vnodes[slot] = v;
				slot++;
			}
		}
		new RingSort(positions, owners, vnodes, endpoints).sort(0, total - 1);
		this.points = positions;
		this.owners = owners;
		// About one bucket per point, at most 2^16 (a 256 KiB index).
		this.bucketBits = Math.max(4, Math.min(16, 64 - Long.numberOfLeadingZeros(Math.max(1, this.points.length))));
		this.bucketStart = new int[(1 << this.bucketBits) + 1];
		slot = 0;
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

	private static int pointCount(double perWeight, int weight) {
		return (int) Math.max(1, Math.round(perWeight * weight));
	}

	/**
	 * Sorts the points in place by position, then address, then point number: a quicksort
	 * over the three parallel arrays, with insertion sort for short ranges. Positions are
	 * hashes, so a middle pivot partitions evenly; recursing into the shorter side bounds
	 * the stack by log2 of the ring size.
	 */
	private static final class RingSort {

		private final long[] positions;

		private final int[] owners;

		private final int[] vnodes;

		private final Endpoint[] endpoints;

		RingSort(long[] positions, int[] owners, int[] vnodes, Endpoint[] endpoints) {
			this.positions = positions;
			this.owners = owners;
			this.vnodes = vnodes;
			this.endpoints = endpoints;
		}

		void sort(int low, int high) {
			while (high - low > 16) {
				int i = low;
				int j = high;
				int pivot = (low + high) >>> 1;
				long pivotPosition = this.positions[pivot];
				int pivotOwner = this.owners[pivot];
				int pivotVnode = this.vnodes[pivot];
				while (i <= j) {
					while (compare(i, pivotPosition, pivotOwner, pivotVnode) < 0) {
						i++;
					}
					while (compare(j, pivotPosition, pivotOwner, pivotVnode) > 0) {
						j--;
					}
					if (i <= j) {
						swap(i++, j--);
					}
				}
				if (j - low < high - i) {
					sort(low, j);
					low = i;
				}
				else {
					sort(i, high);
					high = j;
				}
			}
			for (int i = low + 1; i <= high; i++) {
				for (int j = i; j > low
						&& compare(j, this.positions[j - 1], this.owners[j - 1], this.vnodes[j - 1]) < 0; j--) {
					swap(j, j - 1);
				}
			}
		}

		private int compare(int slot, long position, int owner, int vnode) {
			int byPosition = Long.compare(this.positions[slot], position);
			if (byPosition != 0) {
				return byPosition;
			}
			// A 64-bit collision: by address, then point number, as documented.
			int byAddress = this.endpoints[this.owners[slot]].address().compareTo(this.endpoints[owner].address());
			return (byAddress != 0) ? byAddress : Integer.compare(this.vnodes[slot], vnode);
		}

		private void swap(int a, int b) {
			long position = this.positions[a];
			this.positions[a] = this.positions[b];
			this.positions[b] = position;
			int owner = this.owners[a];
			this.owners[a] = this.owners[b];
			this.owners[b] = owner;
			int vnode = this.vnodes[a];
			this.vnodes[a] = this.vnodes[b];
			this.vnodes[b] = vnode;
		}

	}

}
