package dev.gatewaylb.internal.balance;

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
 * <p>
 * <b>Bounded loads</b> (a {@link BalancerSettings#hashBalanceFactor()
 * hash-balance-factor} {@code c > 1}): endpoint {@code i} of weight {@code w_i} takes at
 * most {@code ceil(c x (T + 1) x w_i / W)} requests in flight, where {@code T} is the sum
 * of the in-flight counts of the ring's endpoints and {@code W} the sum of their weights:
 * {@code c} times its weighted share of the requests in flight, the one being placed
 * included. An endpoint is under its bound when its count is below that; since counts are
 * integers, {@code n < ceil(x)} exactly when {@code n < x}, which is tested in integers:
 * {@code n x q x W < p x (T + 1) x w_i}, with {@code c = p / q} in lowest terms (the
 * factor counted to a millionth). Every pick starts at the key's owner and, while the
 * endpoint it looks at is at its bound, walks on clockwise to the next point of another
 * endpoint; the first endpoint under its bound takes the request. No pick remembers
 * another: the key is back on its owner as soon as the owner's load allows. With
 * {@code c > 1} the bounds add up to more than {@code T}, so some endpoint is always
 * under its bound; should none be (counts move during the walk), the owner takes the
 * request. Factor 1.25, three endpoints of weight 1, 14 in flight of which 7 at the key's
 * owner: the bound is {@code ceil(1.25 x 15 / 3) = 7}, so the request goes to the next
 * endpoint clockwise that holds fewer than 7.
 * <p>
 * An idle owner is always under its bound (the bound is at least 1) and is taken without
 * summing the counts; otherwise the pick reads every endpoint's count once, like
 * least-requests, and walks the ring. The counts are read one at a time while requests
 * come and go, and a pick claims its endpoint after selecting it, so two racing picks may
 * both see an endpoint one below its bound and both take it: the bound holds up to the
 * picks that race, as HAProxy's does. Nothing is written, so a stale read costs one
 * request over the bound or one spill too many, never a lost or corrupted count.
 *
 * @see <a href="https://github.com/RJ/ketama">ketama</a>
 * @see <a href="https://arxiv.org/abs/1608.01350">Mirrokni, Thorup, Zadimoghaddam:
 * Consistent Hashing with Bounded Loads</a>
 * @see <a href="https://github.com/haproxy/haproxy/blob/master/src/lb_chash.c">HAProxy's
 * chash_server_is_eligible</a>, which rounds the total up and shares it out by weight,
 * where this rounds each endpoint's share up
 */
final class KetamaRing implements Strategy {

	static final int POINTS_PER_WEIGHT = 160;

	static final int MAX_POINTS = 1 << 20;

	/**
	 * The bounded-load factor is used to this many parts: 1.25 is 1,250,000 / 1,000,000,
	 * that is 5 / 4.
	 */
	static final long FACTOR_SCALE = 1_000_000;

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

	private final Members members;

	/**
	 * {@code p} of the bounded-load factor {@code p / q} in lowest terms; 0 when bounded
	 * load is off.
	 */
	private final long factorNumerator;

	/**
	 * {@code q x W}: the factor's denominator times the ring's total weight. A double
	 * holding an integer: the products compared with it are exact below 2^53 (far beyond
	 * any real count), and degrade by rounding, never by overflow, past it.
	 */
	private final double factorDenominatorTimesWeight;

	KetamaRing(Members members, Strategy withoutKey) {
		this.withoutKey = withoutKey;
		this.members = members;
		Endpoint[] endpoints = members.endpoints;
		long totalWeight = 0;
		for (int index : members.eligible) {
			totalWeight += endpoints[index].weight();
		}
		long numerator = Math.round(members.settings.hashBalanceFactor() * FACTOR_SCALE);
		long gcd = gcd(numerator, FACTOR_SCALE);
		this.factorNumerator = numerator / gcd;
		this.factorDenominatorTimesWeight = (double) (FACTOR_SCALE / gcd) * totalWeight;
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
		return selectHash(StableHash.hash(key));
	}

	/**
	 * Selects the endpoint of a key whose hash ({@link StableHash#hash}) is given: for a
	 * caller that hashed the key already.
	 * @param hash the key's hash
	 * @return the endpoint's index, or -1 when the ring is empty
	 */
	int selectHash(long hash) {
		if (this.points.length == 0) {
			return -1;
		}
		int slot = ownerSlot(hash);
		return (this.factorNumerator == 0) ? this.owners[slot] : selectBounded(slot);
	}

	/**
	 * Returns the owner of a key's hash on the ring, whatever the endpoints' loads.
	 * @param hash the key's hash
	 * @return the endpoint's index, or -1 when the ring is empty
	 */
	int ownerOf(long hash) {
		return (this.points.length == 0) ? -1 : this.owners[ownerSlot(hash)];
	}

	/**
	 * Returns the owner of {@code ownerSlot} if it is under its bound, else the first
	 * endpoint under its bound clockwise from it, else the owner.
	 */
	private int selectBounded(int ownerSlot) {
		int owner = this.owners[ownerSlot];
		EndpointState[] states = this.members.states;
		int ownerLoad = states[owner].inFlight();
		if (ownerLoad == 0) {
			// A bound is at least 1: no need to sum the counts.
			return owner;
		}
		long total = 0;
		for (EndpointState state : this.members.eligibleStates) {
			total += state.inFlight();
		}
		// p x (T + 1), an integer held exactly by a double for any real count.
		double admitted = this.factorNumerator * (double) (total + 1);
		if (underBound(ownerLoad, owner, admitted)) {
			return owner;
		}
		int length = this.points.length;
		for (int step = 1; step < length; step++) {
			int slot = ownerSlot + step;
			if (slot >= length) {
				slot -= length;
			}
			int candidate = this.owners[slot];
			// A point of the owner, or of an endpoint already found at its bound, is read
			// again rather than remembered: no allocation, and a count that fell since is
			// taken into account.
			if (candidate != owner && underBound(states[candidate].inFlight(), candidate, admitted)) {
				return candidate;
			}
		}
		return owner;
	}

	/**
	 * Returns whether {@code load < c x (T + 1) x w / W}, computed as
	 * {@code load x q x W < p x (T + 1) x w}.
	 */
	private boolean underBound(int load, int index, double admitted) {
		return load * this.factorDenominatorTimesWeight < admitted * this.members.endpoints[index].weight();
	}

	private static long gcd(long a, long b) {
		while (b != 0) {
			long remainder = a % b;
			a = b;
			b = remainder;
		}
		return a;
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
