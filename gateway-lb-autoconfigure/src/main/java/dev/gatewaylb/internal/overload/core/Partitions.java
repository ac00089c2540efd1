package dev.gatewaylb.internal.overload.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

/**
 * The partitions of one service's concurrency limit ({@code concurrency.partitions}), as
 * Netflix's partitioned limiter shares one: each partition is guaranteed its share of the
 * service's limit (at least one request), and the rest, what the shares leave, is the
 * share of requests of no listed partition. A request of a partition under the places it
 * is owed (its share, and a burst allowance while its demand is not far past the share:
 * {@link #underShare}) is admitted even when every endpoint is at its limit; one over
 * them only while the service is under its limit and an endpoint has room, so shedding
 * starts with the partitions over their shares, and a partition may use what the others
 * leave idle.
 * <p>
 * With {@code concurrency.max-wait}, a request that would be shed waits for a place in
 * its partition's queue instead ({@link #await}); a request that ends wakes one waiter,
 * of the partition furthest under its share ({@link #wakeOne}).
 * <p>
 * Thread-safe without locks: one atomic counter of requests in flight per partition, and
 * the service's limit, which the control thread writes. A partition's count may pass its
 * share by the picks that read it at once, as the endpoints' limits may. The waiters are
 * lock-free queues; each waiter is woken or cancelled once, by one compare-and-set on it,
 * and whoever wins it takes it off the counts, so a waiter is never woken twice nor woken
 * after its deadline shed it.
 */
public final class Partitions {

	/**
	 * The weight of a tick's sample in a partition's load: with a tick every tenth of a
	 * second, an average over about a second.
	 */
	static final double LOAD_SMOOTHING = 0.1;

	private final String[] names;

	/**
	 * Each partition's share, the rest's last.
	 */
	private final double[] shares;

	private final AtomicInteger[] inFlight;

	private final Map<String, Double> configured;

	private volatile long serviceLimit;

	/**
	 * Each partition's load: its requests in flight as the control thread samples them
	 * each tick, averaged over about a second ({@link #LOAD_SMOOTHING} a tick). Written
	 * by the control thread only.
	 */
	private final double[] load;

	/**
	 * Each partition's requests admitted and refused (shed, or sent to wait), counted by
	 * the request path ({@link LongAdder}s: no contended write), and what the control
	 * thread read of them at its last tick and their averages a tick: its demand is its
	 * load scaled by what it was offered over what it was admitted, so that a partition
	 * held at its share by shedding is not taken for one whose load fits its share.
	 */
	private final LongAdder[] admitted;

	private final LongAdder[] refused;

	private final long[] admittedBefore;

	private final long[] refusedBefore;

	private final double[] admittedRate;

	private final double[] offeredRate;

	/**
	 * Each partition's owed places: the requests in flight under which it is admitted
	 * whatever the others borrowed ({@link #underShare}). Its share of the service's
	 * limit, plus a burst allowance while its demand is not far past its share. The
	 * control thread publishes a new array each tick; the request path reads the
	 * reference once.
	 */
	private volatile long[] owed;

	/**
	 * Each partition's requests waiting for a place, first come first served.
	 */
	private final ConcurrentLinkedDeque<Waiter>[] queues;

	/**
	 * Each partition's waiters, for its bound.
	 */
	private final AtomicInteger[] queued;

	/**
	 * All waiters: the one read a release makes while nobody waits.
	 */
	private final AtomicInteger waiting = new AtomicInteger();

	/**
	 * Each client's waiters ({@code concurrency.max-wait-per-client}), by the key the
	 * caller gives (the client's address). Written only on the wait path, by a request
	 * that found no place and by a waiter's leaving, never by a request that takes a
	 * place: a {@link ConcurrentHashMap}'s atomic {@code merge} and
	 * {@code computeIfPresent} keep a client's count exact against its other requests
	 * joining and leaving at once (each holds the key's bin for one addition), and an
	 * entry is removed with its last waiter, so the map holds only clients that wait.
	 */
	private final ConcurrentHashMap<Object, Integer> waitingByClient = new ConcurrentHashMap<>();

	/**
	 * Waiters woken and not yet through their pick: a newcomer must not take the place
	 * freed for them in between ({@link #waiting()} counts them).
	 */
	private final AtomicInteger handedOver = new AtomicInteger();

	@SuppressWarnings("unchecked")
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
		this.load = new double[this.inFlight.length];
		this.admitted = new LongAdder[this.inFlight.length];
		this.refused = new LongAdder[this.inFlight.length];
		this.admittedBefore = new long[this.inFlight.length];
		this.refusedBefore = new long[this.inFlight.length];
		this.admittedRate = new double[this.inFlight.length];
		this.offeredRate = new double[this.inFlight.length];
		this.owed = new long[this.inFlight.length];
		this.queues = new ConcurrentLinkedDeque[this.inFlight.length];
		this.queued = new AtomicInteger[this.inFlight.length];
		for (int i = 0; i < this.inFlight.length; i++) {
			this.inFlight[i] = new AtomicInteger();
			this.queues[i] = new ConcurrentLinkedDeque<>();
			this.queued[i] = new AtomicInteger();
			this.admitted[i] = new LongAdder();
			this.refused[i] = new LongAdder();
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
	 * Returns whether partition {@code index} has fewer requests in flight than the
	 * places it is owed, so that it is admitted whatever the others borrowed, over the
	 * endpoints' limits if need be (as Netflix's partitioned limiter admits a partition
	 * below its guaranteed limit even when the total is over the limit). Before the first
	 * limit is known every partition is under its share.
	 * <p>
	 * The places owed are its share of the service's limit, and a burst allowance of
	 * three times the square root of the share on top while its demand (its requests in
	 * flight averaged over about a second, scaled by what it was offered over what it was
	 * admitted) is short of the share plus the allowance, and of twice the share. A share
	 * counted only in requests in flight sheds a partition whose load fits its share: its
	 * requests arrive at random, so their count passes its average by about its square
	 * root as often as not, and with {@code critical: 0.8} carrying 75% of the capacity
	 * (about 13 requests in flight for 15 places) a place count sheds 8 to 14% of them
	 * (an Erlang loss system). The square-root staffing rule's three standard deviations
	 * cover a Poisson burst but for about one in a thousand.
	 * <p>
	 * The allowance stays past the share, not only under it, because the limit moves:
	 * {@code gradient2} lowers it in dips, and a dip takes a partition's share under a
	 * demand that fitted it (critical's 15 places of a limit of 18 become 10 of 12,
	 * against about 13 in flight); had the allowance gone with it, critical would be held
	 * at 10 for the dip's length (95.1% of its requests admitted at 150% on real
	 * backends). A partition whose demand is past its share by the allowance, or by the
	 * share itself (a flood, or one being shed hard: 3 in flight for a share of 1, whose
	 * allowance of 3 would owe it 4), is owed its share only, so the limit still protects
	 * the endpoints from it; the share caps that margin because for a share of a few
	 * places the allowance is several times the share.
	 * @param index a partition's index
	 * @return whether under its share
	 */
	public boolean underShare(int index) {
		return this.serviceLimit == 0 || this.inFlight[index].get() < this.owed[index];
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
		// Past what each is owed, not its share: a partition within its burst allowance
		// is not one others may be admitted past the limit against.
		long[] owed = this.owed;
		long own = this.inFlight[index].get();
		long ownShare = owed[index];
		long taken = 0;
		boolean anotherFurtherPast = false;
		for (int i = 0; i < this.inFlight.length; i++) {
			long count = (i == index) ? own : this.inFlight[i].get();
			taken += count;
			if (i != index) {
				long share = owed[i];
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
		this.admitted[index].increment();
	}

	/**
	 * Counts a request of partition {@code index} done.
	 * @param index a partition's index
	 */
	public void release(int index) {
		this.inFlight[index].decrementAndGet();
	}

	/**
	 * Queues a request of partition {@code index} that found no place, to be woken when
	 * one frees: at most as many of a partition wait as its share of the service's limit
	 * guarantees it places (at least one), so that one partition's waiters cannot fill
	 * the queues of the others, and a wait is short (each waiter has a place coming
	 * within about one request's time). A request that was woken and lost the place to
	 * another goes back to the head of its queue, past the bound: it had its turn.
	 * <p>
	 * One client (the key the caller gives, its address) may hold at most
	 * {@code perClient} of the wait queue, whose length is the service's limit (one
	 * before it is known), at least one waiter: one client's burst cannot fill the queue
	 * and make every other client's request wait behind it or be shed.
	 * @param index the request's partition
	 * @param again whether the request waited before and was woken
	 * @param client the request's client, or {@code null} when unknown (not bounded)
	 * @param perClient the share of the wait queue one client may hold, above 0, at most
	 * 1
	 * @param wake what to run when a place frees for it, on the thread that freed it; run
	 * at most once, and never after {@link #cancel} took the waiter
	 * @return the waiter, or {@code null} when the partition's queue is full or the
	 * client holds its share of the queue
	 */
	public @Nullable Waiter await(int index, boolean again, @Nullable Object client, double perClient, Runnable wake) {
		long limit = this.serviceLimit;
		if (client != null) {
			int bound = (int) Math.max(1,
					Math.min(Integer.MAX_VALUE, (long) Math.floor(perClient * Math.max(1, limit))));
			// Merged first, checked after, as the queue's bound is: two of a client's
			// requests that join at once cannot both pass its last place.
			if (this.waitingByClient.merge(client, 1, Integer::sum) > bound && !again) {
				forget(client);
				return null;
			}
		}
		AtomicInteger queued = this.queued[index];
		// A new waiter past the bound (the share's places, one before a limit is
		// known) is refused; a woken one that lost its place rejoins regardless.
		if (queued.incrementAndGet() > Math.max(1, share(index, limit)) && !again) {
			queued.decrementAndGet();
			if (client != null) {
				forget(client);
			}
			return null;
		}
		Waiter waiter = new Waiter(index, client, wake);
		if (again) {
			this.queues[index].addFirst(waiter);
		}
		else {
			this.queues[index].addLast(waiter);
		}
		// Counted last: a release that reads a count sees its waiter queued. A place
		// freed between the failed pick and this line wakes nobody; the next one does
		// (under load a place frees every few milliseconds), or the waiter's last pick at
		// its deadline finds it.
		this.waiting.incrementAndGet();
		return waiter;
	}

	/**
	 * Takes a waiter off its queue unwoken: its deadline came, or its client left.
	 * @param waiter the waiter
	 * @return whether it was still waiting; {@code false} when a place already woke it
	 */
	public boolean cancel(Waiter waiter) {
		if (!waiter.take(Waiter.CANCELLED)) {
			return false;
		}
		this.queues[waiter.partition].remove(waiter);
		left(waiter);
		return true;
	}

	/**
	 * Wakes one waiter, if any, for the place a request that ended freed: the first of
	 * the partition furthest under its share (the fewest requests in flight for its
	 * share). One volatile read when nobody waits.
	 */
	public void wakeOne() {
		while (this.waiting.get() > 0) {
			int index = neediest();
			if (index < 0) {
				// Counted but not yet in its queue, or just taken by another: nothing
				// to wake now.
				return;
			}
			Waiter waiter = this.queues[index].pollFirst();
			if (waiter != null && waiter.take(Waiter.WOKEN)) {
				// Handed over before it leaves the count, so that waiting() never reads 0
				// between the two.
				this.handedOver.incrementAndGet();
				left(waiter);
				waiter.wake.run();
				return;
			}
			// Polled a cancelled one (its canceller removes it too), or lost the poll to
			// another release: look again.
		}
	}

	/**
	 * Says that a woken waiter has picked (or will not: its client left): the place freed
	 * for it is no longer held back from newcomers.
	 */
	public void handOverTaken() {
		this.handedOver.decrementAndGet();
	}

	/**
	 * Returns how many requests wait for a place, counting those woken and not yet
	 * through their pick.
	 * @return the waiters
	 */
	public int waiting() {
		return this.waiting.get() + this.handedOver.get();
	}

	private void left(Waiter waiter) {
		this.queued[waiter.partition].decrementAndGet();
		if (waiter.client != null) {
			forget(waiter.client);
		}
		this.waiting.decrementAndGet();
	}

	/**
	 * Counts one of a client's waiters gone, and the client with its last one.
	 */
	private void forget(Object client) {
		this.waitingByClient.computeIfPresent(client, (key, count) -> (count > 1) ? count - 1 : null);
	}

	/**
	 * Returns how many of a client's requests wait for a place.
	 * @param client the client's key
	 * @return its waiters
	 */
	public int waiting(Object client) {
		return this.waitingByClient.getOrDefault(client, 0);
	}

	/**
	 * The partition with waiters whose requests in flight are the smallest part of its
	 * share; one of no share comes last.
	 */
	private int neediest() {
		int best = -1;
		double bestUse = Double.MAX_VALUE;
		for (int i = 0; i < this.queues.length; i++) {
			if (this.queues[i].isEmpty()) {
				continue;
			}
			double use = (this.shares[i] == 0) ? Double.MAX_VALUE / 2 : this.inFlight[i].get() / this.shares[i];
			if (best < 0 || use < bestUse) {
				best = i;
				bestUse = use;
			}
		}
		return best;
	}

	/**
	 * Sets the service's limit, the sum of its endpoints' limits: the control thread
	 * writes it, each tick. Each tick also samples each partition's requests in flight,
	 * admissions and refusals into its demand, and publishes the places each is owed. A
	 * limit that rose wakes as many waiters as it added places: no request ending would.
	 * @param limit the limit, 0 while none is known
	 */
	public void serviceLimit(long limit) {
		long before = this.serviceLimit;
		long[] owed = new long[this.load.length];
		for (int i = 0; i < owed.length; i++) {
			this.load[i] += LOAD_SMOOTHING * (this.inFlight[i].get() - this.load[i]);
			long admitted = this.admitted[i].sum();
			long refused = this.refused[i].sum();
			double admittedNow = admitted - this.admittedBefore[i];
			double offeredNow = admittedNow + refused - this.refusedBefore[i];
			this.admittedBefore[i] = admitted;
			this.refusedBefore[i] = refused;
			this.admittedRate[i] += LOAD_SMOOTHING * (admittedNow - this.admittedRate[i]);
			this.offeredRate[i] += LOAD_SMOOTHING * (offeredNow - this.offeredRate[i]);
			long share = share(i, limit);
			long allowance = (long) Math.ceil(3 * Math.sqrt(share));
			owed[i] = (share > 0 && demand(i) < share + Math.min(share, allowance)) ? share + allowance : share;
		}
		// The places owed first: a request that reads the new limit reads them too.
		this.owed = owed;
		this.serviceLimit = limit;
		for (long added = limit - before; added > 0 && this.waiting.get() > 0; added--) {
			wakeOne();
		}
	}

	/**
	 * Returns partition {@code index}'s demand in requests in flight: its load, scaled by
	 * what it was offered over what it was admitted (Little's law: at the same latency,
	 * the requests in flight grow with the rate). Infinite for a partition offered
	 * requests and admitted none.
	 */
	private double demand(int index) {
		double offered = this.offeredRate[index];
		double admitted = this.admittedRate[index];
		if (offered <= admitted) {
			return this.load[index];
		}
		return (admitted > 0) ? this.load[index] * offered / admitted : Double.POSITIVE_INFINITY;
	}

	/**
	 * Counts a request of partition {@code index} that found no place: shed, or sent to
	 * wait for one.
	 * @param index a partition's index
	 */
	public void refused(int index) {
		this.refused[index].increment();
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
					(limit == 0) ? 0 : share(i, limit), (limit == 0) ? 0 : this.owed[i], this.inFlight[i].get(),
					this.queued[i].get()));
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
	 * A request waiting for a place: woken or cancelled once.
	 */
	public static final class Waiter {

		private static final int WAITING = 0;

		private static final int WOKEN = 1;

		private static final int CANCELLED = 2;

		private static final AtomicIntegerFieldUpdater<Waiter> STATE = AtomicIntegerFieldUpdater
			.newUpdater(Waiter.class, "state");

		private final int partition;

		private final @Nullable Object client;

		private final Runnable wake;

		private volatile int state;

		Waiter(int partition, @Nullable Object client, Runnable wake) {
			this.partition = partition;
			this.client = client;
			this.wake = wake;
		}

		boolean take(int to) {
			return STATE.compareAndSet(this, WAITING, to);
		}

		/**
		 * Returns whether a place woke it (rather than it waiting still, or being
		 * cancelled).
		 * @return whether it was woken
		 */
		public boolean woken() {
			return this.state == WOKEN;
		}

	}

	/**
	 * One partition as reported.
	 *
	 * @param name its name, {@code null} for the rest
	 * @param share its share of the limit
	 * @param guaranteed the requests in flight its share guarantees now
	 * @param owed the requests in flight under which it is admitted now: its share, plus
	 * the burst allowance while its demand is not far past its share
	 * ({@link #underShare})
	 * @param inFlight its requests in flight
	 * @param waiting its requests waiting for a place ({@code concurrency.max-wait})
	 */
	public record Partition(@Nullable String name, double share, long guaranteed, long owed, int inFlight,
			int waiting) {
	}

}
