package dev.gatewaylb.gateway.settings;

import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.gatewaylb.config.ServiceProperties;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The built-in defaults and what IDEs show for them cannot drift apart.
 */
class BuiltInDefaultsTests {

	private static final String PREFIX = "gateway.lb.defaults.";

	@Test
	void equalTheDefaultsTheConfigurationMetadataShows() throws Exception {
		Map<String, String> shown = new LinkedHashMap<>();
		metadataDefaults().forEach((key, value) -> shown.put(PREFIX + key, text(value)));
		ServiceProperties bound = new Binder(new MapConfigurationPropertySource(shown))
			.bindOrCreate("gateway.lb.defaults", Bindable.of(ServiceProperties.class));
		assertThat(bound).isEqualTo(SettingsMapper.BUILT_IN_DEFAULTS);
	}

	/**
	 * Returns the default of every {@code gateway.lb.defaults} key that the configuration
	 * metadata shows, by its name relative to {@code defaults}.
	 */
	@SuppressWarnings("unchecked")
	static Map<String, Object> metadataDefaults() throws Exception {
		Map<String, Object> metadata;
		try (InputStream json = BuiltInDefaultsTests.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			metadata = JsonMapper.builder().build().readValue(json, Map.class);
		}
		Map<String, Object> defaults = new LinkedHashMap<>();
		for (Map<String, Object> property : (List<Map<String, Object>>) metadata.get("properties")) {
			String name = (String) property.get("name");
			if (name.startsWith(PREFIX)) {
				defaults.put(name.substring(PREFIX.length()), property.get("defaultValue"));
			}
		}
		assertThat(defaults).as("keys under %s in the metadata", PREFIX).isNotEmpty();
		return defaults;
	}

	private static String text(Object value) {
		if (value instanceof List<?> list) {
			return list.stream().map(String::valueOf).collect(Collectors.joining(","));
		}
		return String.valueOf(value);
	}

}
