package dev.gatewaylb.config;

import java.io.InputStream;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What IDEs show for {@code gateway.lb}: every key has a description, and every key under
 * {@code defaults} shows its default.
 */
class ConfigurationMetadataTests {

	@Test
	@SuppressWarnings("unchecked")
	void describesEveryPropertyAndTheDefaultOfEveryDefaultsKey() throws Exception {
		Map<String, Object> metadata;
		try (InputStream json = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			metadata = JsonMapper.builder().build().readValue(json, Map.class);
		}
		List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata.get("properties");
		assertThat(properties).extracting((p) -> p.get("name"))
			.contains("gateway.lb.enabled", "gateway.lb.defaults.algorithm", "gateway.lb.defaults.slow-start",
					"gateway.lb.defaults.hash-key", "gateway.lb.defaults.peak-ewma.decay", "gateway.lb.services",
					"gateway.lb.trusted-proxies");
		assertThat(properties).allSatisfy((p) -> assertThat((String) p.get("description")).as("%s", p.get("name"))
			.isNotBlank()
			.doesNotContain("{@")
			.doesNotStartWithIgnoringCase("the "));
		assertThat(properties).filteredOn((p) -> ((String) p.get("name")).startsWith("gateway.lb.defaults."))
			.allSatisfy((p) -> assertThat(p.get("defaultValue")).as("%s", p.get("name")).isNotNull());
	}

}
