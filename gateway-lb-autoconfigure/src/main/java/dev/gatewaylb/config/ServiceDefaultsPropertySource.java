package dev.gatewaylb.config;

import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;

/**
 * Presents {@code gateway.lb.defaults.*} under every {@code gateway.lb.services.<id>.*}
 * that does not set the key itself, so that binding one service yields its merged
 * settings. A collection is taken whole: a service that sets any element of a list does
 * not inherit the other elements from the defaults.
 * <p>
 * Iterable, listing the names of the sources it wraps, so that binding the
 * {@code services} map finds every service key exactly as the user spelled it
 * ({@code CATALOG}, {@code my_svc}, {@code [a.b]}) and binds its value through the
 * fallback.
 */
final class ServiceDefaultsPropertySource implements IterableConfigurationPropertySource {

	static final ConfigurationPropertyName SERVICES = ConfigurationPropertyName.of("gateway.lb.services");

	static final ConfigurationPropertyName DEFAULTS = ConfigurationPropertyName.of("gateway.lb.defaults");

	private final Iterable<ConfigurationPropertySource> sources;

	ServiceDefaultsPropertySource(Iterable<ConfigurationPropertySource> sources) {
		this.sources = sources;
	}

	@Override
	public @Nullable ConfigurationProperty getConfigurationProperty(ConfigurationPropertyName name) {
		ConfigurationProperty own = find(name);
		if (own != null) {
			return own;
		}
		ConfigurationPropertyName fallback = defaultsName(name);
		return (fallback != null && !setsEnclosingCollection(name)) ? find(fallback) : null;
	}

	@Override
	public Stream<ConfigurationPropertyName> stream() {
		return StreamSupport.stream(this.sources.spliterator(), false)
			.filter(IterableConfigurationPropertySource.class::isInstance)
			.flatMap((source) -> ((IterableConfigurationPropertySource) source).stream())
			.filter(SERVICES::isAncestorOf)
			.distinct();
	}

	@Override
	public ConfigurationPropertyState containsDescendantOf(ConfigurationPropertyName name) {
		ConfigurationPropertyState own = state(name);
		if (own == ConfigurationPropertyState.PRESENT) {
			return own;
		}
		ConfigurationPropertyName fallback = defaultsName(name);
		ConfigurationPropertyState inherited = (fallback != null) ? state(fallback) : ConfigurationPropertyState.ABSENT;
		if (inherited == ConfigurationPropertyState.PRESENT) {
			return inherited;
		}
		return (own == ConfigurationPropertyState.UNKNOWN || inherited == ConfigurationPropertyState.UNKNOWN)
				? ConfigurationPropertyState.UNKNOWN : ConfigurationPropertyState.ABSENT;
	}

	/**
	 * Maps {@code gateway.lb.services.<id>.rest} to {@code gateway.lb.defaults.rest}.
	 */
	private static @Nullable ConfigurationPropertyName defaultsName(ConfigurationPropertyName name) {
		int prefix = SERVICES.getNumberOfElements() + 1;
		if (!SERVICES.isAncestorOf(name) || name.getNumberOfElements() <= prefix) {
			return null;
		}
		return DEFAULTS.append(name.subName(prefix));
	}

	/**
	 * Returns whether the service itself sets a collection that {@code name} is an
	 * element of.
	 */
	private boolean setsEnclosingCollection(ConfigurationPropertyName name) {
		for (int i = SERVICES.getNumberOfElements() + 2; i < name.getNumberOfElements(); i++) {
			if (name.isNumericIndex(i) && state(name.chop(i)) == ConfigurationPropertyState.PRESENT) {
				return true;
			}
		}
		return false;
	}

	private @Nullable ConfigurationProperty find(ConfigurationPropertyName name) {
		for (ConfigurationPropertySource source : this.sources) {
			ConfigurationProperty property = source.getConfigurationProperty(name);
			if (property != null) {
				return property;
			}
		}
		return null;
	}

	private ConfigurationPropertyState state(ConfigurationPropertyName name) {
		ConfigurationPropertyState result = ConfigurationPropertyState.ABSENT;
		for (ConfigurationPropertySource source : this.sources) {
			ConfigurationPropertyState state = source.containsDescendantOf(name);
			if (state == ConfigurationPropertyState.PRESENT) {
				return state;
			}
			if (state == ConfigurationPropertyState.UNKNOWN) {
				result = state;
			}
		}
		return result;
	}

}
