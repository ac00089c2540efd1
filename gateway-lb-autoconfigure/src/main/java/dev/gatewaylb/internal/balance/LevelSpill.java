package dev.gatewaylb.internal.balance;

import java.util.HashMap;
import java.util.Map;

/**
 * Decides which priority levels are busy enough to spill to the next level
 * ({@code load-aware}), and what a request costs in each level: one service's controller,
 * fed one window of observations at a time by the control thread; not thread-safe.
 * <p>
 * A level <b>spills</b> while it is <b>queueing</b> and its answers are <b>slower than
 * the next level's by more than a tenth</b>; it stops when it stops queueing. Queueing is
 * more than one request in flight per endpoint on average <i>and</i> answers half again
 * as slow as the level's own unloaded latency (the lowest it has shown): requests wait
 * behind others, which more requests in flight on backends that serve many at once do not
 * show. It starts only after {@value #PERSISTENCE} windows in a row say so: an ordinary
 * load, whose answers wobble by a few tens of percent, never sends a request out of its
 * zone, and neither does the share the overprovisioning factor already moved (that
 * share's endpoints are no slower for it). While it spills, each request drawn for it
 * goes to whichever is answered sooner by the estimate: the endpoint its level's
 * algorithm picks or the one the next level's picks. The estimate of an endpoint is its
 * level's latency scaled by the endpoint's requests in flight against the level's
 * average: {@code latency x (inFlight + 1) / (average inFlight + 1)}
 * ({@link Load#unitNanos} is {@code latency / (average + 1)}). On a backend that serves
 * one request at a time this is the wait behind what it holds; on one that serves many at
 * once, whose latency does not grow with its load, it stays about the latency: a quiet
 * zone keeps its traffic.
 * <p>
 * Why these signals: a request sent to the next level pays the zone hop, and a request
 * kept in a queueing level pays the wait; the answers' latency, as the gateway sees it,
 * holds both (the hop in the next level's latency, the wait in the busy level's), so no
 * one has to configure the hop. Why a choice per request and not a share moved from one
 * level to the other: under load, a share drawn at random leaves the requests in flight
 * of the two levels free to drift apart (a closed system of two queues with fixed routing
 * spreads its requests between them almost uniformly), and the tail follows the longer
 * queue; choosing by the queues keeps them even. The queueing condition keeps a level
 * that is quiet from spilling on noise (a GC pause, one slow answer): one client's
 * requests never leave their zone. The latency of a level that has had no answers yet is
 * taken as the lowest the busy level has shown.
 * <p>
 * Envoy's zone-weighted balancing does not look at load, and its load-aware variant is
 * unfinished; Finagle's aperture and peak-EWMA balance load within one pool.
 */
public final class LevelSpill {

	/**
	 * How much slower than the next level a level must be to start spilling.
	 */
	static final double MARGIN = 0.1;

	/**
	 * Requests in flight per endpoint above which a level may be queueing.
	 */
	static final double QUEUEING = 1.0;

	/**
	 * How much slower than its own unloaded latency a level's answers must be for it to
	 * be queueing.
	 */
	static final double QUEUE_LATENCY_MARGIN = 0.5;

	/**
	 * Windows in a row a level must queue, slower than the next, before it spills.
	 */
	static final int PERSISTENCE = 3;

	/**
	 * The weight of a window in the smoothed latencies and queues.
	 */
	static final double SMOOTHING = 0.5;

	private final Map<Integer, Double> latency = new HashMap<>();

	private final Map<Integer, Double> lowest = new HashMap<>();

	private final Map<Integer, Double> queue = new HashMap<>();

	private final Map<Integer, Boolean> spilling = new HashMap<>();

	/**
	 * The windows in a row each level has met the conditions to start spilling.
	 */
	private final Map<Integer, Integer> pressed = new HashMap<>();

	/**
	 * What a level's picks need to spill: whether it spills, and the cost of one request
	 * in flight there.
	 *
	 * @param spilling whether requests drawn for the level may go to the next level
	 * @param unitNanos the level's latency over its requests in flight per endpoint plus
	 * one: an endpoint's estimate is this times its own requests in flight plus one
	 */
	public record Load(boolean spilling, double unitNanos) {
	}

	/**
	 * Takes one window's observations and returns each level's load.
	 * @param priorities the levels' priorities, ascending
	 * @param latencyNanos each level's mean latency over the window, NaN when it had no
	 * answers
	 * @param inFlightPerEndpoint each level's requests in flight per endpoint that takes
	 * traffic, now; NaN when none takes traffic
	 * @return the load of each priority that has a latency, by priority
	 */
	public Map<Integer, Load> next(int[] priorities, double[] latencyNanos, double[] inFlightPerEndpoint) {
		int levels = priorities.length;
		for (int level = 0; level < levels; level++) {
			int priority = priorities[level];
			if (!Double.isNaN(latencyNanos[level])) {
				this.latency.merge(priority, latencyNanos[level],
						(old, now) -> (1 - SMOOTHING) * old + SMOOTHING * now);
				// The lowest latency rises slowly, so that it follows a level that got
				// slower for good.
				this.lowest.merge(priority, latencyNanos[level], (old, now) -> Math.min(old * 1.01, now));
			}
			if (!Double.isNaN(inFlightPerEndpoint[level])) {
				this.queue.merge(priority, inFlightPerEndpoint[level],
						(old, now) -> (1 - SMOOTHING) * old + SMOOTHING * now);
			}
		}
		Map<Integer, Load> loads = new HashMap<>();
		for (int level = 0; level < levels; level++) {
			int priority = priorities[level];
			Double own = this.latency.get(priority);
			if (own == null) {
				continue;
			}
			double queueing = this.queue.getOrDefault(priority, 0.0);
			int next = nextTakingTraffic(inFlightPerEndpoint, level);
			boolean spilling = false;
			boolean pressed = false;
			if (next >= 0 && !Double.isNaN(inFlightPerEndpoint[level]) && queueing > QUEUEING) {
				Double theirs = this.latency.get(priorities[next]);
				double compared = (theirs != null) ? theirs : this.lowest.get(priority);
				// Started by waits that last (slower than unloaded, and than the next
				// level), kept while the level has more in flight than its endpoints
				// serve one at a time: moving requests away shortens the waits, which
				// must
				// not stop the spill that shortened them.
				// Each window's own latency, not the smoothed one: one slow window (a GC
				// pause) would otherwise count for the few that its smoothing spans.
				double window = Double.isNaN(latencyNanos[level]) ? own : latencyNanos[level];
				pressed = window > this.lowest.get(priority) * (1 + QUEUE_LATENCY_MARGIN)
						&& window > compared * (1 + MARGIN);
				int windows = pressed ? this.pressed.merge(priority, 1, Integer::sum) : 0;
				spilling = this.spilling.getOrDefault(priority, false) || windows >= PERSISTENCE;
			}
			if (!pressed) {
				this.pressed.put(priority, 0);
			}
			this.spilling.put(priority, spilling);
			loads.put(priority, new Load(spilling, own / (queueing + 1)));
		}
		for (int level = 0; level < levels; level++) {
			// A level that has never answered is costed from the lowest latency of the
			// level before it that spills to it: the hop is unknown until paid.
			int priority = priorities[level];
			if (!loads.containsKey(priority) && level > 0) {
				Load before = loads.get(priorities[level - 1]);
				if (before != null && before.spilling()) {
					loads.put(priority, new Load(false, this.lowest.get(priorities[level - 1])));
				}
			}
		}
		return loads;
	}

	private static int nextTakingTraffic(double[] inFlightPerEndpoint, int level) {
		for (int next = level + 1; next < inFlightPerEndpoint.length; next++) {
			if (!Double.isNaN(inFlightPerEndpoint[next])) {
				return next;
			}
		}
		return -1;
	}

}
