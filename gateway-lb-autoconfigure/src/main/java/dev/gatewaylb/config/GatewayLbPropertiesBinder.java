package dev.gatewaylb.config;

import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.Environment;

/**
 * Binds {@code gateway.lb} from an environment, each service merged over the defaults.
 * Used at start-up and again on every refresh, so both validate the same way.
 */
public final class GatewayLbPropertiesBinder {

	private GatewayLbPropertiesBinder() {
	}

	/**
	 * Binds and validates {@code gateway.lb}.
	 * @param environment the environment
	 * @return the properties, with every service's settings already merged over
	 * {@code defaults}
	 * @throws BindException naming the property and value when a value is invalid
	 */
	public static GatewayLbProperties bind(Environment environment) {
		Iterable<ConfigurationPropertySource> sources = ConfigurationPropertySources.get(environment);
		PropertySourcesPlaceholdersResolver placeholders = new PropertySourcesPlaceholdersResolver(environment);
		GatewayLbProperties root = new Binder(sources, placeholders).bindOrCreate("gateway.lb",
				Bindable.of(GatewayLbProperties.class));
		Binder merged = new Binder(List.of(new ServiceDefaultsPropertySource(sources)), placeholders);
		Map<String, ServiceProperties> services = merged
			.bind(ServiceDefaultsPropertySource.SERVICES, Bindable.mapOf(String.class, ServiceProperties.class),
					BindHandler.DEFAULT)
			.orElse(Map.of());
		return new GatewayLbProperties(root.enabled(), root.defaults(), services, root.splits(), root.trustedProxies());
	}

}
