package dev.gatewaylb.gateway;

import java.util.List;
import java.util.function.Function;

import dev.gatewaylb.gateway.discovery.InstanceSource;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;

/**
 * An {@link InstanceSource} whose answers a test writes: every service balanced here, its
 * instances whatever the function gives.
 */
final class ScriptedInstanceSource implements InstanceSource {

	private final Function<String, Mono<List<ServiceInstance>>> answers;

	ScriptedInstanceSource(Function<String, Mono<List<ServiceInstance>>> answers) {
		this.answers = answers;
	}

	@Override
	public boolean balancesHere(String serviceId) {
		return true;
	}

	@Override
	public Mono<List<ServiceInstance>> instances(String serviceId) {
		return this.answers.apply(serviceId);
	}

}
