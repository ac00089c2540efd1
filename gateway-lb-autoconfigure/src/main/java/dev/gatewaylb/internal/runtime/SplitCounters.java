package dev.gatewaylb.internal.runtime;

import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.internal.split.Split;

/**
 * How many requests each split sent to each of its targets, kept across refreshes for as
 * long as the split and the target stay configured.
 * <p>
 * Counting is two map reads and a {@link LongAdder} increment: no lock, no allocation
 * once a target's counter exists. Counters are created when settings are applied, not on
 * the request path.
 */
public final class SplitCounters {

	private final ConcurrentMap<String, ConcurrentMap<String, LongAdder>> counters = new ConcurrentHashMap<>();

	/**
	 * Creates the counters of every split target in {@code settings} that has none.
	 * @param settings the settings now in force
	 */
	public void prepare(GatewayLbSettings settings) {
		for (SplitSettings split : settings.splits().values()) {
			Split choice = split.split();
			ConcurrentMap<String, LongAdder> targets = this.counters.computeIfAbsent(choice.name(),
					(name) -> new ConcurrentHashMap<>());
			choice.targets()
				.forEach((target) -> targets.computeIfAbsent(target.service(), (service) -> new LongAdder()));
		}
	}

	/**
	 * Counts one request a split sent to a target.
	 * @param split the split's name as configured
	 * @param target the target's service id as configured
	 */
	public void increment(String split, String target) {
		ConcurrentMap<String, LongAdder> targets = this.counters.get(split);
		LongAdder counter = (targets != null) ? targets.get(target) : null;
		if (counter != null) {
			counter.increment();
		}
	}

	/**
	 * Returns the counter of a split's target.
	 * @param split the split's name as configured
	 * @param target the target's service id as configured
	 * @return the counter; a fresh one if none was prepared
	 */
	public LongAdder counter(String split, String target) {
		return this.counters.computeIfAbsent(split, (name) -> new ConcurrentHashMap<>())
			.computeIfAbsent(target, (service) -> new LongAdder());
	}

	/**
	 * Returns how many requests a split sent to each target.
	 * @param split the split's name as configured
	 * @return counts by target service id
	 */
	public Map<String, Long> counts(String split) {
		Map<String, Long> counts = new LinkedHashMap<>();
		this.counters.getOrDefault(split, new ConcurrentHashMap<>())
			.forEach((target, adder) -> counts.put(target, adder.sum()));
		return counts;
	}

}
