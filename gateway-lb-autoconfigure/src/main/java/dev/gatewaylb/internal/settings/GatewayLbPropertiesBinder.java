package dev.gatewaylb.internal.settings;

import dev.gatewaylb.config.GatewayLbProperties;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.Environment;

/**
 * Binds {@code gateway.lb} from an environment as written, with placeholders resolved.
 * Merging each service over the defaults is not binding's job: the settings layer
 * resolves it, one key at a time.
 */
public final class GatewayLbPropertiesBinder {

	private GatewayLbPropertiesBinder() {
	}

	/**
	 * Binds and validates {@code gateway.lb}.
	 * @param environment the environment
	 * @return the properties; {@code defaults} and each service hold only the keys they
	 * set
	 * @throws BindException naming the property and value when a value is invalid
	 */
	public static GatewayLbProperties bind(Environment environment) {
		Binder binder = new Binder(ConfigurationPropertySources.get(environment),
				new PropertySourcesPlaceholdersResolver(environment));
		return binder.bindOrCreate("gateway.lb", Bindable.of(GatewayLbProperties.class));
	}

}
