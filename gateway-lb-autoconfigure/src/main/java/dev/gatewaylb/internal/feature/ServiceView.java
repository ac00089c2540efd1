package dev.gatewaylb.internal.feature;

import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.Snapshot;

/**
 * What a feature sees of a service: its id, its balancer and current snapshot, and its
 * clock. The service's runtime is one; a test hands in its own.
 */
public interface ServiceView {

	/**
	 * Returns the service id, in lower case.
	 * @return the id
	 */
	String id();

	/**
	 * Returns the current snapshot of the service's endpoints.
	 * @return the snapshot
	 */
	Snapshot<?> snapshot();

	/**
	 * Returns the service's balancer, for a job that feeds it (a load it spills).
	 * @return the balancer
	 */
	Balancer<?> balancer();

	/**
	 * Returns the service's clock: the time of every latency sample, deadline and window
	 * of the service.
	 * @return nanoseconds
	 */
	long nanoTime();

}
