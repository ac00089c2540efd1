package dev.gatewaylb.internal.feature;

import java.time.Duration;

import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.Snapshot;
import io.netty.handler.codec.http.HttpHeaders;
import reactor.core.publisher.Mono;

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

	/**
	 * Sends a GET of {@code path} to endpoint {@code index} of {@link #snapshot()}
	 * through the service's probe client (its TLS, its connect timeout, connections of
	 * its own, so that a probe never waits behind traffic), for a job that asks endpoints
	 * something out of band.
	 * @param index the endpoint's index in the snapshot
	 * @param path the path, from {@code /}
	 * @param timeout the longest wait for the answer's headers
	 * @return the answer's headers; empty when it failed or timed out. By default, a
	 * service with no probe client: empty
	 */
	default Mono<HttpHeaders> probe(int index, String path, Duration timeout) {
		return Mono.empty();
	}

}
