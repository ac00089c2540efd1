package dev.gatewaylb.internal.rollout;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.jspecify.annotations.Nullable;

/**
 * What one side of a rollout's comparison (the target, or the split's other targets) did
 * since its step began: requests, failures, a latency histogram and the distinct clients
 * they came from.
 * <p>
 * Each answer names its client (a hash of its sticky value or address): a client counts
 * for at most {@code max-outcomes-per-client} answers per interval, and the side counts
 * how many clients it heard from, so that one client can neither fill
 * {@code min-requests} nor outweigh everyone else. Clients are told apart in
 * {@value #CLIENT_SLOTS} slots, chosen by the hash mixed with a seed of this process:
 * clients that share a slot share its limit and count as one, which only makes the judge
 * more cautious (20 clients share a slot with a chance of about 1 in 20, and then two of
 * them count as one; with thousands of clients the count is a lower bound, still far
 * above any {@code min-clients}). A client that forges a new identity per request (a new
 * sticky value each time) counts as a new client each time: see {@code docs/rollouts.md}.
 * <p>
 * Attempts record from any event loop: a compare-and-set on the client's slot, two
 * {@link LongAdder} increments and a wait-free {@link Recorder} write, no lock, no
 * allocation. The slot's compare-and-set is what makes the limit exact: two answers of
 * one client racing on two event loops cannot both take its last unit. The control thread
 * alone drains the recorder into the step's histogram ({@link #drain()}) and resets it
 * when a step begins, so the histogram needs no guard. The recorder has a fixed range (1
 * µs to a minute) for the reason {@code HedgeDelay} gives: HdrHistogram's self-resizing
 * recorder can spin forever under concurrent writers.
 */
public final class RolloutWindow {

	/**
	 * How many slots tell clients apart: a power of two, 16 KiB per side.
	 */
	static final int CLIENT_SLOTS = 4096;

	/**
	 * The largest count a slot holds: the low 30 bits of it.
	 */
	static final int MAX_COUNT = (1 << 30) - 1;

	/**
	 * The bit of a slot that says its client was heard from on the step, kept when a new
	 * interval of the step restarts the counts.
	 */
	private static final int SEEN = 1 << 30;

	private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(1);

	/**
	 * Each slot: {@link #SEEN} and the answers counted in the interval.
	 */
	private final AtomicIntegerArray clientSlots = new AtomicIntegerArray(CLIENT_SLOTS);

	/**
	 * The slots seen on the step: set only by the thread whose compare-and-set set a
	 * slot's {@link #SEEN} bit, so each slot counts once.
	 */
	private final AtomicLong clients = new AtomicLong();

	/**
	 * Each slot's answers and errors since the step began: what the judge leaves out of
	 * the client that failed most, so that no single client decides a verdict.
	 */
	private final AtomicIntegerArray slotRequests = new AtomicIntegerArray(CLIENT_SLOTS);

	private final AtomicIntegerArray slotErrors = new AtomicIntegerArray(CLIENT_SLOTS);

	/**
	 * Mixed into each client's hash, so that nobody outside the process can choose values
	 * that land in another client's slot.
	 */
	private final int seed = ThreadLocalRandom.current().nextInt();

	private final LongAdder requests = new LongAdder();

	private final LongAdder errors = new LongAdder();

	private final RolloutPlan plan;

	private final Recorder recorder = new Recorder(1, MAX_MICROS, 2);

	private final Histogram step = new Histogram(1, MAX_MICROS, 2);

	/**
	 * The recorder's last interval, handed back to it for reuse: one of its own, so none
	 * until the first drain.
	 */
	private @Nullable Histogram interval;

	RolloutWindow(RolloutPlan plan) {
		this.plan = plan;
	}

	/**
	 * Records what an attempt's answer was, when its headers arrive: an error when the
	 * plan's {@code error-statuses} count its status, else a success with its latency.
	 * The latency ends at the headers, not at the body's end, so that a client that reads
	 * slowly cannot make a healthy canary look slow.
	 * @param client the hash of the client's identity
	 * @param status the answer's status
	 * @param latencyNanos from sending the request to the response's headers
	 * @return whether it was counted as a success, which a body that breaks later
	 * {@link #bodyBroke turns into an error}
	 */
	public boolean answered(int client, int status, long latencyNanos) {
		if (this.plan.isError(status)) {
			failed(client);
			return false;
		}
		return succeeded(client, latencyNanos);
	}

	/**
	 * Records an answered attempt, unless its client has had its share of the interval.
	 * @param client the hash of the client's identity
	 * @param latencyNanos from sending the request to the response's headers
	 * @return whether it was counted
	 */
	public boolean succeeded(int client, long latencyNanos) {
		int slot = admit(client);
		if (slot < 0) {
			return false;
		}
		count(slot, false);
		this.recorder.recordValue(Math.min(Math.max(latencyNanos / 1000, 1), MAX_MICROS));
		return true;
	}

	/**
	 * Turns a counted success into an error: the body of an answer whose headers were
	 * counted broke off before its end, and the client got a truncated answer. Called
	 * once per answer, only for one {@link #answered} counted as a success, so that the
	 * errors stay among the requests counted and within the client's share.
	 * @param client the hash of the client's identity
	 */
	public void bodyBroke(int client) {
		this.errors.increment();
		this.slotErrors.incrementAndGet(slot(client));
	}

	/**
	 * Records a comparison of a shadow stage, unless its client has had its share: a
	 * copied answer that matched the primary's counts as a request, one that differed as
	 * an error. No latency: the shadow's is not the release's.
	 * @param client the hash of the client's identity
	 * @param differed whether the shadow's answer differed from the primary's
	 */
	public void compared(int client, boolean differed) {
		int slot = admit(client);
		if (slot >= 0) {
			count(slot, differed);
		}
	}

	/**
	 * Records an attempt that failed, unless its client has had its share of the
	 * interval: an error status, a connection failure, a timeout, or the gateway's own
	 * answer for the side (no endpoint to pick, a full pool). Its latency is not
	 * recorded: the failure is judged by the error rate.
	 * @param client the hash of the client's identity
	 */
	public void failed(int client) {
		int slot = admit(client);
		if (slot >= 0) {
			count(slot, true);
		}
	}

	/**
	 * Counts one answer of a client, if its slot has room, and the client itself the
	 * first time it is heard from on the step.
	 */
	private int admit(int client) {
		int slot = slot(client);
		int limit = this.plan.maxOutcomesPerClient();
		for (;;) {
			int value = this.clientSlots.get(slot);
			int count = value & MAX_COUNT;
			if (limit > 0 && count >= limit) {
				return -1;
			}
			// Without a limit the count stays 0: only the client is counted.
			int next = SEEN | ((limit > 0) ? count + 1 : 0);
			if (next == value) {
				return slot;
			}
			if (this.clientSlots.compareAndSet(slot, value, next)) {
				if ((value & SEEN) == 0) {
					this.clients.incrementAndGet();
				}
				return slot;
			}
		}
	}

	/**
	 * Counts an admitted answer on the step, on its client's slot too.
	 */
	private void count(int slot, boolean error) {
		this.requests.increment();
		this.slotRequests.incrementAndGet(slot);
		if (error) {
			this.errors.increment();
			this.slotErrors.incrementAndGet(slot);
		}
	}

	/**
	 * Returns a client's slot: its hash mixed with the seed (MurmurHash3's finalizer), so
	 * that similar hashes (addresses in one subnet) spread over every slot.
	 */
	int slot(int client) {
		int h = client ^ this.seed;
		h ^= h >>> 16;
		h *= 0x85ebca6b;
		h ^= h >>> 13;
		h *= 0xc2b2ae35;
		h ^= h >>> 16;
		return h & (CLIENT_SLOTS - 1);
	}

	/**
	 * Starts a new interval of the same step (a judgement held it): each client may count
	 * for as many answers again, and the clients already heard from stay counted. Control
	 * thread only. A slot is cleared by compare-and-set, so that a client counted for the
	 * first time while this runs is not counted twice.
	 */
	void nextInterval() {
		for (int slot = 0; slot < CLIENT_SLOTS; slot++) {
			int value = this.clientSlots.get(slot);
			while ((value & MAX_COUNT) != 0 && !this.clientSlots.compareAndSet(slot, value, value & SEEN)) {
				value = this.clientSlots.get(slot);
			}
		}
	}

	/**
	 * Moves what the recorder holds into the step's histogram. Control thread only.
	 */
	void drain() {
		this.interval = this.recorder.getIntervalHistogram(this.interval);
		this.step.add(this.interval);
	}

	/**
	 * Forgets everything: a step begins. Control thread only. A request that was
	 * recording while this runs may land on either side of the reset, which a judgement
	 * over a whole interval does not feel.
	 */
	void reset() {
		for (int slot = 0; slot < CLIENT_SLOTS; slot++) {
			this.clientSlots.set(slot, 0);
			this.slotRequests.set(slot, 0);
			this.slotErrors.set(slot, 0);
		}
		this.clients.set(0);
		this.requests.reset();
		this.errors.reset();
		this.recorder.reset();
		this.step.reset();
	}

	/**
	 * Returns what this side did since its step began, as drained last. Control thread
	 * only.
	 * @return the window
	 */
	Rollout.Window window() {
		long p99 = (this.step.getTotalCount() > 0) ? this.step.getValueAtPercentile(99) * 1000 : 0;
		// The client with the most errors (the most answers among equals): a scan of the
		// slots, on the control thread, once per judgement.
		int topErrors = 0;
		int topRequests = 0;
		for (int slot = 0; slot < CLIENT_SLOTS; slot++) {
			int errors = this.slotErrors.get(slot);
			int requests = this.slotRequests.get(slot);
			if (errors > topErrors || (errors == topErrors && errors > 0 && requests > topRequests)) {
				topErrors = errors;
				topRequests = requests;
			}
		}
		// The slots and the totals are not reset at one instant: an answer counted while
		// a
		// step begins can stay in its slot and leave the total (a fresh-clone CI run saw
		// a
		// client of 10 errors in a window of 8). One client's count is never more than
		// the
		// window's.
		long requests = this.requests.sum();
		long errors = this.errors.sum();
		return new Rollout.Window(requests, errors, p99, this.clients.get(), Math.min(topRequests, requests),
				Math.min(topErrors, errors));
	}

}
