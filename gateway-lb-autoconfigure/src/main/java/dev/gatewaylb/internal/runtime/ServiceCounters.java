package dev.gatewaylb.internal.runtime;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.internal.discovery.DiscoveryRejection;

/**
 * The counters of one service's core, carried from each of its runtimes to the next so
 * that a refresh never resets them (each feature keeps its own counts in its state).
 * Counting is one {@link LongAdder} increment: striped, so event loops counting at once
 * do not contend on one cache line.
 *
 * @param retried retries sent
 * @param refusedByBudget retries the retry budget refused
 * @param saturated requests answered 503 because the service's pool was saturated
 * @param failOpen picks made while every endpoint was ejected or unhealthy
 * @param discoveryRejected instances of discovery's answers that were not balanced, by
 * why (counted at every poll that lists them), one counter per reason
 * @param slowReaders clients cut off because they accepted no bytes of their answer for
 * {@code timeouts.response-write-idle}
 * @param slowSenders clients answered 408 (or cut off) because their request body went
 * idle past {@code timeouts.request-body-idle} or fell below
 * {@code timeouts.request-body-min-rate}
 * @param noEndpoint requests answered 503 (or 404) because the service had no endpoint to
 * pick
 * @param slowReadersBelowRate clients cut off because they took their answer slower than
 * {@code timeouts.response-write-min-rate}
 * @param pastMaxDuration answers cut off because they still streamed
 * {@code timeouts.max-duration} after their request was first sent
 */
public record ServiceCounters(LongAdder retried, LongAdder refusedByBudget, LongAdder saturated, LongAdder failOpen,
		Map<DiscoveryRejection, LongAdder> discoveryRejected, LongAdder slowReaders, LongAdder slowSenders,
		LongAdder noEndpoint, LongAdder slowReadersBelowRate, LongAdder pastMaxDuration) {

	/**
	 * Returns fresh counters at 0.
	 * @return the counters
	 */
	public static ServiceCounters create() {
		Map<DiscoveryRejection, LongAdder> rejected = new EnumMap<>(DiscoveryRejection.class);
		for (DiscoveryRejection rejection : DiscoveryRejection.values()) {
			rejected.put(rejection, new LongAdder());
		}
		return new ServiceCounters(new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(),
				Collections.unmodifiableMap(rejected), new LongAdder(), new LongAdder(), new LongAdder(),
				new LongAdder(), new LongAdder());
	}

}
