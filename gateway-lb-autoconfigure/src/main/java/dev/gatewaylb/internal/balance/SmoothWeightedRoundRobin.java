package dev.gatewaylb.internal.balance;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

/**
 * Smooth weighted round-robin, the algorithm of nginx's upstream module: each step adds
 * every endpoint's weight to its running current weight, selects the largest (ties to the
 * lowest index) and subtracts the total weight from the winner. Weights 5,1,1 select
 * {@code a a b a c a a}; weights 5,1,2 select {@code a c a a b a c a}. Over one period
 * (the sum of the weights) each endpoint is selected exactly its weight times and the
 * running weights return to 0, so the sequence repeats.
 * <p>
 * nginx runs the step under a lock. This class computes one period ahead into a table and
 * selects with one atomic ticket: {@code table[ticket++ % period]} is the nginx sequence,
 * lock-free and O(1) whatever the number of endpoints. The ticket belongs to the service,
 * not the snapshot, so a rebuild continues the sequence where it was.
 * <p>
 * While endpoints ramp (slow start), the table is rebuilt from the ramped weights at most
 * {@value #RAMP_STEPS} times per window: the first pick that sees the old one expire
 * hands the build to the balancer's rebuild executor, and picks use the old table until
 * the new one is published.
 *
 * @see <a href=
 * "https://github.com/nginx/nginx/commit/52327e0627f49dbda1e8db695e63a4b0af4448b1">nginx
 * smooth weighted round-robin</a>
 */
final class SmoothWeightedRoundRobin implements Strategy {

	/**
	 * Longest table, in entries (16 MiB). Longer periods are approximated.
	 */
	static final int MAX_PERIOD = 1 << 22;

	/**
	 * Most period x distinct-weight steps a table build may take.
	 */
	static final long MAX_BUILD_STEPS = 20_000_000L;

	static final int RAMP_STEPS = 20;

	/**
	 * Weight resolution while ramping: an endpoint of weight 1 ramps in 1/20 steps.
	 */
	static final int RAMP_SCALE = 20;

	private static final long NEVER = Long.MIN_VALUE;

	private final Members members;

	private final AtomicLong ticket;

	private volatile Table table;

	/**
	 * Set while one pick rebuilds an expired ramp table; the others keep the old one.
	 */
	private final AtomicBoolean rebuilding = new AtomicBoolean();

	SmoothWeightedRoundRobin(Members members, AtomicLong ticket) {
		this.members = members;
		this.ticket = ticket;
		this.table = members.mayRamp() ? buildTable(members.nanoClock.getAsLong()) : buildTable(NEVER);
	}

	@Override
	public int select(@Nullable CharSequence key) {
		Table current = this.table;
		if (current.expiresAtNanos != NEVER) {
			current = refresh(current);
		}
		int[] order = current.order;
		if (order.length == 0) {
			return -1;
		}
		return order[Math.floorMod(this.ticket.getAndIncrement(), order.length)];
	}

	private Table refresh(Table current) {
		long now = this.members.nanoClock.getAsLong();
		if (now - current.expiresAtNanos < 0) {
			return current;
		}
		if (!this.rebuilding.compareAndSet(false, true)) {
			// The next step is on its way; the current table is a step old until then.
			return current;
		}
		try {
			this.members.rebuilds.execute(() -> {
				try {
					long at = this.members.nanoClock.getAsLong();
					this.table = buildTable(this.members.rampingAt(at) ? at : NEVER);
				}
				finally {
					this.rebuilding.set(false);
				}
			});
		}
		catch (RuntimeException ex) {
			this.rebuilding.set(false);
			throw ex;
		}
		// The new table when the executor ran the build here, else the old one.
		return this.table;
	}

	/**
	 * Builds the table of the weights at {@code nowNanos}, or of the configured weights
	 * when {@code nowNanos} is {@link #NEVER}.
	 */
	private Table buildTable(long nowNanos) {
		Endpoint[] endpoints = this.members.endpoints;
		int[] weights = new int[endpoints.length];
		boolean ramping = nowNanos != NEVER && this.members.rampingAt(nowNanos);
		boolean reported = this.members.loadScale != null;
		for (int i = 0; i < endpoints.length; i++) {
			// Times the load reports' scale (a weight is bounded where it is bound, a
			// scale by LoadScales.MAX: the product fits an int).
			int weight = reported ? this.members.weight(i) * this.members.loadScale(i) : this.members.weight(i);
			if (ramping && weight > 0) {
				double scaled = weight * (double) RAMP_SCALE * this.members.rampFactor(i, nowNanos);
				weight = (int) Math.max(1, Math.min(Integer.MAX_VALUE / 2, Math.round(scaled)));
			}
			weights[i] = weight;
		}
		long expires = NEVER;
		if (ramping) {
			long step = Math.max(1_000_000L, this.members.settings.slowStartNanos() / RAMP_STEPS);
			long end = this.members.rampEndsAtNanos;
			expires = (end - (nowNanos + step) < 0) ? end : nowNanos + step;
		}
		return new Table(sequence(weights), expires);
	}

	/**
	 * Returns one period of the smooth weighted round-robin sequence, as endpoint
	 * indexes. Endpoints of weight 0 never appear.
	 * <p>
	 * Weights are first divided by their greatest common divisor: scaling every weight by
	 * k scales every running weight by k, so the sequence of k·w is the sequence of w.
	 * The simulation then runs per group of equal weight rather than per endpoint: the
	 * members of a group differ only by how often each was picked, so the group's largest
	 * running weight always belongs to its next member in index order, and a step
	 * compares one candidate per distinct weight. A build costs period x distinct
	 * weights; past {@link #MAX_PERIOD} or {@link #MAX_BUILD_STEPS} the weights are
	 * halved until it fits, which keeps their ratios only approximately.
	 * @param weights weight per endpoint index, {@code >= 0}
	 * @return the period
	 */
	static int[] sequence(int[] weights) {
		int[] reduced = weights.clone();
		while (true) {
			divideByGcd(reduced);
			long total = 0;
			int max = 0;
			for (int weight : reduced) {
				total += weight;
				max = Math.max(max, weight);
			}
			if (max <= 1) {
				return identity(reduced);
			}
			int groups = (int) Arrays.stream(reduced).filter((w) -> w > 0).distinct().count();
			if (total <= MAX_PERIOD && total * groups <= MAX_BUILD_STEPS) {
				return simulate(reduced, (int) total);
			}
			for (int i = 0; i < reduced.length; i++) {
				reduced[i] = (reduced[i] == 0) ? 0 : (reduced[i] + 1) / 2;
			}
		}
	}

	private static int[] identity(int[] weights) {
		return IntStream.range(0, weights.length).filter((i) -> weights[i] > 0).toArray();
	}

	private static int[] simulate(int[] weights, int total) {
		int[] distinct = Arrays.stream(weights).filter((w) -> w > 0).distinct().toArray();
		int groupCount = distinct.length;
		long[] groupWeight = new long[groupCount];
		int[][] groupMembers = new int[groupCount][];
		for (int g = 0; g < groupCount; g++) {
			int weight = distinct[g];
			groupWeight[g] = weight;
			groupMembers[g] = IntStream.range(0, weights.length).filter((i) -> weights[i] == weight).toArray();
		}
		long[] groupPicks = new long[groupCount];
		int[] order = new int[total];
		for (int step = 1; step <= total; step++) {
			int best = -1;
			long bestValue = 0;
			int bestIndex = 0;
			for (int g = 0; g < groupCount; g++) {
				int[] members = groupMembers[g];
				long picksOfNext = groupPicks[g] / members.length;
				int next = members[(int) (groupPicks[g] % members.length)];
				long value = groupWeight[g] * step - (long) total * picksOfNext;
				if (best < 0 || value > bestValue || (value == bestValue && next < bestIndex)) {
					best = g;
					bestValue = value;
					bestIndex = next;
				}
			}
			order[step - 1] = bestIndex;
			groupPicks[best]++;
		}
		return order;
	}

	private static void divideByGcd(int[] weights) {
		int gcd = 0;
		for (int weight : weights) {
			gcd = gcd(gcd, weight);
		}
		if (gcd > 1) {
			for (int i = 0; i < weights.length; i++) {
				weights[i] /= gcd;
			}
		}
	}

	private static int gcd(int a, int b) {
		while (b != 0) {
			int t = a % b;
			a = b;
			b = t;
		}
		return a;
	}

	private record Table(int[] order, long expiresAtNanos) {
	}

}
