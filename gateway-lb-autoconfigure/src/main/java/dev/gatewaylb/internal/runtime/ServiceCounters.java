package dev.gatewaylb.internal.runtime;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.internal.discovery.DiscoveryRejection;

/**
 * The counters of one service, carried from each of its runtimes to the next so that a
 * refresh never resets them. Counting is one {@link LongAdder} increment: striped, so
 * event loops counting at once do not contend on one cache line.
 *
 * @param retried retries sent
 * @param refusedByBudget retries the retry budget refused
 * @param saturated requests answered 503 because the service's pool was saturated
 * @param failOpen picks made while every endpoint was ejected or unhealthy
 * @param hedgesSent backup requests sent
 * @param hedgesWon backups whose response headers came first
 * @param hedgesLost backups cancelled because the first attempt answered first, or that
 * failed
 * @param hedgesRefusedByBudget backups the hedge budget refused
 * @param discoveryRejected instances of discovery's answers that were not balanced, by
 * why (counted at every poll that lists them), one counter per reason
 * @param slowReaders clients cut off because they accepted no bytes of their answer for
 * {@code timeouts.response-write-idle}
 * @param slowSenders clients answered 408 (or cut off) because their request body went
 * idle past {@code timeouts.request-body-idle} or fell below
 * {@code timeouts.request-body-min-rate}
 * @param noEndpoint requests answered 503 (or 404) because the service had no endpoint to
 * pick
 * @param shed requests answered 503 because every endpoint was at its concurrency limit
 * @param affinityOutcomes requests of a service with endpoint affinity, by what became of
 * their affinity, one counter per outcome
 */
public record ServiceCounters(LongAdder retried, LongAdder refusedByBudget, LongAdder saturated, LongAdder failOpen,
		LongAdder hedgesSent, LongAdder hedgesWon, LongAdder hedgesLost, LongAdder hedgesRefusedByBudget,
		Map<DiscoveryRejection, LongAdder> discoveryRejected, LongAdder slowReaders, LongAdder slowSenders,
		LongAdder noEndpoint, LongAdder shed, Map<AffinityOutcome, LongAdder> affinityOutcomes) {

	/**
	 * Returns fresh counters at 0.
	 * @return the counters
	 */
	public static ServiceCounters create() {
		Map<DiscoveryRejection, LongAdder> rejected = new EnumMap<>(DiscoveryRejection.class);
		for (DiscoveryRejection rejection : DiscoveryRejection.values()) {
			rejected.put(rejection, new LongAdder());
		}
		Map<AffinityOutcome, LongAdder> affinity = new EnumMap<>(AffinityOutcome.class);
		for (AffinityOutcome outcome : AffinityOutcome.values()) {
			affinity.put(outcome, new LongAdder());
		}
		return new ServiceCounters(new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(),
				new LongAdder(), new LongAdder(), new LongAdder(), Collections.unmodifiableMap(rejected),
				new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(),
				Collections.unmodifiableMap(affinity));
	}

	/**
	 * Returns the counter of one affinity outcome.
	 * @param outcome the outcome
	 * @return its counter
	 */
	public LongAdder affinity(AffinityOutcome outcome) {
		return this.affinityOutcomes.get(outcome);
	}

}
