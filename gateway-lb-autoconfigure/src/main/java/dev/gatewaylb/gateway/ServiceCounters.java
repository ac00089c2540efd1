package dev.gatewaylb.gateway;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * One counter per service, created at its first use. Once it exists, counting is a map
 * read and a {@link LongAdder} increment: no lock, no allocation.
 */
final class ServiceCounters {

	private final ConcurrentMap<String, LongAdder> counters = new ConcurrentHashMap<>();

	/**
	 * Returns the counter of a service, creating it the first time.
	 * @param serviceId the service id
	 * @return the counter
	 */
	LongAdder of(String serviceId) {
		LongAdder counter = this.counters.get(serviceId);
		// A read first: computeIfAbsent allocates its lambda and may lock a bin.
		return (counter != null) ? counter : this.counters.computeIfAbsent(serviceId, (id) -> new LongAdder());
	}

}
