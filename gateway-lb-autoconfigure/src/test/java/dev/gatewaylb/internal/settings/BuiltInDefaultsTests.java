package dev.gatewaylb.internal.settings;

import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.gatewaylb.config.RolloutProperties;
import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.config.StickyProperties;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The built-in defaults and what IDEs and the docs show for them cannot drift apart:
 * every default the configuration metadata or a table of the docs shows, bound as a
 * user's value would be, equals the one in {@link BuiltInDefaults}, and the docs have a
 * row for every key.
 */
class BuiltInDefaultsTests {

	private static final String PREFIX = "gateway.lb.defaults.";

	/**
	 * The keys whose value is a map.
	 */
	private static final Set<String> MAP_KEYS = Set.of("concurrency.partitions");

	private static final String ROLLOUT_PREFIX = "gateway.lb.splits.<name>.rollout.";

	/**
	 * A row of a docs table of properties: the property in backquotes, then its default.
	 */
	private static final Pattern ROW = Pattern.compile("\\| `([^`]+)` \\| ([^|]*) \\|.*");

	/**
	 * A default as the docs write it: a value in backquotes, {@code empty},
	 * {@code required} or {@code unset}, either possibly followed by a remark such as
	 * {@code (off)}.
	 */
	private static final Pattern DEFAULT = Pattern.compile("`\\[?([^`\\]]*)]?`.*|(empty).*|(required|unset).*");

	@Test
	void equalTheDefaultsTheConfigurationMetadataShows() throws Exception {
		Map<String, String> shown = new LinkedHashMap<>();
		metadataDefaults().forEach((key, value) -> shown.put(key, text(value)));
		assertThat(bindService(shown)).isEqualTo(ServiceSettings.BUILT_IN);
	}

	@Test
	void equalTheDefaultsTheConfigurationReferenceShows() throws Exception {
		Map<String, String> rows = defaults(docs("configuration.md"));
		Map<String, String> service = under(rows, PREFIX, "");
		assertThat(service.keySet()).as("keys under %s in docs/configuration.md", PREFIX)
			.containsExactlyInAnyOrderElementsOf(metadataDefaults().keySet());
		assertThat(bindService(service)).isEqualTo(ServiceSettings.BUILT_IN);
		assertRollout(under(rows, ROLLOUT_PREFIX, ""), "docs/configuration.md");
	}

	@Test
	void equalTheRolloutDefaultsTheRolloutPageShows() throws Exception {
		assertRollout(defaults(docs("rollouts.md")), "docs/rollouts.md");
	}

	@ParameterizedTest(name = "docs/{0}")
	@ValueSource(strings = { "upstreams.md", "tail-latency.md" })
	void equalTheDefaultsAPageOfAFeatureShows(String page) throws Exception {
		Map<String, String> reference = new LinkedHashMap<>();
		metadataDefaults().forEach((key, value) -> reference.put(key, text(value)));
		Map<String, String> shown = defaults(docs(page));
		assertThat(shown).as("rows of docs/%s", page).isNotEmpty();
		shown.forEach((key, value) -> {
			assertThat(reference).as("docs/%s names a key under defaults", page).containsKey(key);
			Map<String, String> values = new LinkedHashMap<>(reference);
			values.put(key, value);
			assertThat(bindService(values)).as("docs/%s: %s", page, key).isEqualTo(ServiceSettings.BUILT_IN);
		});
	}

	@Test
	void equalTheStickyDefaultsTheSplitsPageShows() throws Exception {
		String prefix = "gateway.lb.splits.<name>.sticky.";
		Map<String, String> shown = under(defaults(docs("splits.md")), prefix, "sticky.");
		assertThat(shown.keySet()).as("sticky keys with a default in docs/splits.md")
			.containsExactlyInAnyOrder("sticky.max-age", "sticky.path", "sticky.secure", "sticky.http-only",
					"sticky.same-site");
		Map<String, String> values = new LinkedHashMap<>(shown);
		values.put("sticky.cookie", "c");
		Binder binder = new Binder(new MapConfigurationPropertySource(values));
		Binder cookieOnly = new Binder(new MapConfigurationPropertySource(Map.of("sticky.cookie", "c")));
		assertThat(binder.bindOrCreate("sticky", Bindable.of(StickyProperties.class)))
			.isEqualTo(cookieOnly.bindOrCreate("sticky", Bindable.of(StickyProperties.class)));
	}

	private static void assertRollout(Map<String, String> shown, String page) {
		List<String> keys = Arrays.stream(RolloutProperties.class.getRecordComponents())
			.map(RecordComponent::getName)
			.map(BuiltInDefaultsTests::kebab)
			.toList();
		assertThat(shown.keySet()).as("rollout keys in %s", page).containsExactlyInAnyOrderElementsOf(keys);
		assertThat(shown).as("target is required").containsEntry("target", null);
		Map<String, String> values = new LinkedHashMap<>();
		shown.forEach((key, value) -> {
			if (value != null) {
				values.put("rollout." + key, value);
			}
		});
		RolloutProperties bound = new Binder(new MapConfigurationPropertySource(values)).bindOrCreate("rollout",
				Bindable.of(RolloutProperties.class));
		assertThat(bound).as("rollout defaults in %s", page).isEqualTo(BuiltInDefaults.ROLLOUT);
	}

	/**
	 * Binds keys named relative to {@code defaults} as {@code gateway.lb.defaults} is
	 * bound.
	 */
	private static ServiceProperties bindService(Map<String, String> values) {
		Map<String, String> prefixed = new LinkedHashMap<>();
		values.forEach((key, value) -> {
			// A map shown empty (empty, or no value) is not written: the binder makes no
			// empty map.
			if (value != null && !(value.isEmpty() && MAP_KEYS.contains(key))) {
				prefixed.put("defaults." + key, value);
			}
		});
		return new Binder(new MapConfigurationPropertySource(prefixed)).bindOrCreate("defaults",
				Bindable.of(ServiceProperties.class));
	}

	/**
	 * Returns the entries of {@code rows} whose property starts with {@code prefix}, the
	 * prefix replaced by {@code replacement}.
	 */
	private static Map<String, String> under(Map<String, String> rows, String prefix, String replacement) {
		Map<String, String> under = new LinkedHashMap<>();
		rows.forEach((property, value) -> {
			if (property.startsWith(prefix)) {
				under.put(replacement + property.substring(prefix.length()), value);
			}
		});
		return under;
	}

	/**
	 * Returns the default of every row of the page's first table of properties whose
	 * default column holds one, {@code null} for a required key.
	 */
	private static Map<String, String> defaults(String page) {
		Map<String, String> defaults = new LinkedHashMap<>();
		List<String> lines = page.lines().toList();
		int header = lines
			.indexOf(lines.stream().filter((line) -> line.startsWith("| property")).findFirst().orElseThrow());
		for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
			Matcher row = ROW.matcher(lines.get(i));
			Matcher value = row.matches() ? DEFAULT.matcher(row.group(2).trim()) : null;
			if (value != null && value.matches()) {
				defaults.put(row.group(1),
						(value.group(1) != null) ? value.group(1).trim() : (value.group(2) != null) ? "" : null);
			}
		}
		assertThat(defaults).as("defaults in the table of properties").isNotEmpty();
		return defaults;
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

	/**
	 * Reads a page of {@code docs} from wherever the build runs: the module (its parent
	 * holds {@code docs}), the project root, or a directory below either.
	 */
	private static String docs(String page) throws Exception {
		Path docs = Path.of("docs", page);
		for (Path directory = Path.of("").toAbsolutePath(); directory != null; directory = directory.getParent()) {
			if (Files.isRegularFile(directory.resolve(docs))) {
				return Files.readString(directory.resolve(docs));
			}
		}
		throw new IllegalStateException(docs + " not found above " + Path.of("").toAbsolutePath());
	}

	private static String kebab(String camel) {
		return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
	}

	private static @Nullable String text(Object value) {
		if (value instanceof Map<?, ?> map && map.isEmpty()) {
			// An empty map: a key not written at all.
			return null;
		}
		if (value instanceof List<?> list) {
			return list.stream().map(String::valueOf).collect(Collectors.joining(","));
		}
		return String.valueOf(value);
	}

}
