package dev.gatewaylb.gateway.discovery;

import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Where a service's instances come from, and whether gateway-lb balances it at all.
 * Called off the event loops, on gateway-lb's control thread.
 */
public interface InstanceSource {

	/**
	 * Returns whether gateway-lb balances the service: false when the application
	 * declares its own balancer for it.
	 * @param serviceId the service id
	 * @return whether balanced here
	 */
	boolean balancesHere(String serviceId);

	/**
	 * Returns the service's instances as discovery reports them now.
	 * @param serviceId the service id
	 * @return the instances, in any order
	 */
	Mono<List<ServiceInstance>> instances(String serviceId);

	/**
	 * Returns the ids of every service discovery knows, as
	 * {@code DiscoveryClient.getServices()} lists them: with the ids that routes, the
	 * configuration and splits name, the only services a request may name (any other id
	 * is answered 503 without being tracked). Asked once per discovery poll.
	 * @return the ids, in any spelling; none by default
	 */
	default Mono<Set<String>> services() {
		return Mono.just(Set.of());
	}

	/**
	 * Registers who to tell when a service's instances change, for a source that hears of
	 * changes as they happen (a watch): the service is then read again at once, not at
	 * the next poll a second later. Called once, before the first poll. A source that
	 * hears of nothing leaves this alone (the default): every service is read once a
	 * second.
	 * @param changed takes the id of a service whose instances changed, from any thread;
	 * cheap, it only asks for a read
	 */
	default void onChange(Consumer<String> changed) {
	}

	/**
	 * Returns what the source says of its view of discovery, for a source that keeps one
	 * (a watch); {@code null} for one that reads discovery at every poll (the default).
	 * Called from the health endpoint's thread: it must not block.
	 * @return the status, or {@code null}
	 */
	default @Nullable SourceStatus status() {
		return null;
	}

}
