package dev.gatewaylb.internal.settings;

import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.cloud.client.discovery.simple.InstanceProperties;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;

/**
 * Checks the weights of instances declared in configuration for Spring Cloud's simple
 * discovery client, so that a typo fails start-up instead of surfacing as a warning at
 * the first request. Weights from other discovery clients arrive at run time and are
 * checked then (an invalid one is logged once and balanced as 1).
 */
public final class SimpleDiscoveryWeights {

	static final String PREFIX = "spring.cloud.discovery.client.simple.instances";

	private SimpleDiscoveryWeights() {
	}

	/**
	 * Validates every {@code metadata.weight} under
	 * {@code spring.cloud.discovery.client.simple.instances}.
	 * @param environment the environment
	 * @throws InvalidConfigurationPropertyValueException naming the first invalid weight
	 */
	public static void validate(Environment environment) {
		Bindable<Map<String, List<InstanceProperties>>> declared = Bindable
			.of(ResolvableType.forClassWithGenerics(Map.class, ResolvableType.forClass(String.class),
					ResolvableType.forClassWithGenerics(List.class, InstanceProperties.class)));
		Map<String, List<InstanceProperties>> services = Binder.get(environment)
			.bind(PREFIX, declared)
			.orElse(Map.of());
		services.forEach((service, instances) -> {
			for (int i = 0; i < instances.size(); i++) {
				String weight = instances.get(i).getMetadata().get(InstanceWeights.METADATA_KEY);
				try {
					InstanceWeights.parse(weight);
				}
				catch (IllegalArgumentException ex) {
					throw new InvalidConfigurationPropertyValueException(
							PREFIX + "." + service + "[" + i + "].metadata.weight", weight,
							"expected: an integer >= 0");
				}
			}
		});
	}

}
