package dev.gatewaylb.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Grafana dashboard shipped in {@code docs/grafana/gateway-lb.json} against the
 * meters a running gateway really exports. A query naming a meter that does not exist (a
 * typo, a renamed meter, a missing {@code _total}) draws an empty panel in Grafana and no
 * error anywhere, so this test scrapes {@code /actuator/prometheus} of a gateway with
 * every kind of meter in it (a balanced service that hedges, a split with a rollout,
 * their pools) and checks every metric and every label the dashboard's queries, legends
 * and variables name.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GrafanaDashboardIT extends GatewayIntegrationTest {

	static final Path DASHBOARD = Path.of("docs", "grafana", "gateway-lb.json");

	static final List<TestBackend> catalog = List.of(TestBackend.start("catalog-1"), TestBackend.start("catalog-2"));

	static final List<TestBackend> stable = List.of(TestBackend.start("stable"));

	static final List<TestBackend> canary = List.of(TestBackend.start("canary"));

	/**
	 * Words of PromQL and of Grafana's variable queries that look like metric names:
	 * aggregations (which may be followed by {@code by} rather than a parenthesis),
	 * binary operators and modifiers, and the functions the dashboard may call.
	 */
	static final Set<String> PROMQL_WORDS = Set.of("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
			"count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio", "by", "without", "on", "ignoring",
			"group_left", "group_right", "and", "or", "unless", "offset", "bool", "atan2", "inf", "nan", "rate",
			"irate", "increase", "delta", "idelta", "deriv", "histogram_quantile", "label_values", "label_names",
			"query_result", "metrics", "clamp_min", "clamp_max", "abs", "ceil", "floor", "round", "vector", "scalar",
			"time", "absent", "changes", "resets", "sort", "sort_desc", "label_replace", "label_join", "max_over_time",
			"min_over_time", "avg_over_time", "sum_over_time", "last_over_time");

	private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`");

	private static final Pattern GRAFANA_VARIABLE = Pattern.compile("\\$\\{[^}]*}|\\$\\w+|\\[\\[[^\\]]*]]");

	private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][\\w:]*+)?\\s*\\{([^}]*)}");

	private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_]\\w*)\\s*(?:=~|!~|!=|=)");

	private static final Pattern RANGE = Pattern.compile("\\[[^\\]]*]");

	private static final Pattern LABEL_LIST = Pattern
		.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");

	/**
	 * An identifier that is not part of a number or a duration and not a function call;
	 * possessive, so that {@code rate(} cannot match as {@code rat}.
	 */
	private static final Pattern IDENTIFIER = Pattern.compile("(?<![\\w.:])([a-zA-Z_:][\\w:]*+)(?!\\s*\\()");

	private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([a-zA-Z_]\\w*)\\s*}}");

	private static final Pattern LABEL_VALUES = Pattern
		.compile("^\\s*label_values\\((.*),\\s*([a-zA-Z_]\\w*)\\s*\\)\\s*$");

	private static final Pattern SAMPLE_LABEL = Pattern.compile("([a-zA-Z_]\\w*)=\"(?:[^\"\\\\]|\\\\.)*\"");

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("catalog")
			.instances("catalog", catalog)
			.set("gateway.lb.services.catalog.hedge.max-extra-load", 0.5)
			.route("shop")
			.instances("shop-stable", stable)
			.instances("shop-canary", canary)
			.set("gateway.lb.splits.shop.targets.shop-stable", 90)
			.set("gateway.lb.splits.shop.targets.shop-canary", 10)
			.set("gateway.lb.splits.shop.rollout.target", "shop-canary")
			.set("gateway.lb.splits.shop.rollout.steps[0]", 50)
			.set("gateway.lb.splits.shop.rollout.steps[1]", 100)
			.set("gateway.lb.splits.shop.rollout.interval", "1h")
			.set("management.endpoints.web.exposure.include", "gatewaylb,prometheus");
	}

	@AfterAll
	static void stopBackends() {
		List.of(catalog, stable, canary).forEach((backends) -> backends.forEach(TestBackend::close));
	}

	@Test
	void isAnImportableDashboardWithAPrometheusInputAndTheServiceAndSplitVariables() throws IOException {
		JsonNode dashboard = dashboard();
		assertThat(dashboard.path("title").asString("")).isNotBlank();
		assertThat(dashboard.path("uid").asString("")).isNotBlank();
		assertThat(dashboard.path("schemaVersion").asInt()).isGreaterThanOrEqualTo(36);
		List<JsonNode> inputs = new ArrayList<>();
		dashboard.path("__inputs").forEach(inputs::add);
		assertThat(inputs).anySatisfy((input) -> {
			assertThat(input.path("name").asString("")).isEqualTo("DS_PROMETHEUS");
			assertThat(input.path("type").asString("")).isEqualTo("datasource");
			assertThat(input.path("pluginId").asString("")).isEqualTo("prometheus");
		});
		List<JsonNode> panels = panels(dashboard);
		List<JsonNode> queried = panels.stream().filter((panel) -> !panel.path("targets").isEmpty()).toList();
		assertThat(queried).as("panels with queries").hasSizeGreaterThanOrEqualTo(8);
		assertThat(panels.stream().map((panel) -> panel.path("id").asInt()).distinct()).as("panel ids are unique")
			.hasSize(panels.size());
		assertThat(panels.stream().filter((panel) -> "row".equals(panel.path("type").asString("")))).as("rows")
			.isNotEmpty();
		for (JsonNode panel : queried) {
			assertThat(datasource(panel)).as("datasource of %s", title(panel)).isEqualTo("${DS_PROMETHEUS}");
			for (JsonNode target : panel.path("targets")) {
				assertThat(target.path("expr").asString("")).as("query of %s", title(panel)).isNotBlank();
				assertThat(datasource(target)).as("datasource of a query of %s", title(panel))
					.isEqualTo("${DS_PROMETHEUS}");
			}
		}
		Map<String, JsonNode> variables = new HashMap<>();
		dashboard.path("templating")
			.path("list")
			.forEach((variable) -> variables.put(variable.path("name").asString(""), variable));
		assertThat(variables).containsKeys("service", "split");
		for (String name : List.of("service", "split")) {
			JsonNode variable = variables.get(name);
			assertThat(variable.path("type").asString("")).as(name).isEqualTo("query");
			assertThat(datasource(variable)).as(name).isEqualTo("${DS_PROMETHEUS}");
			assertThat(variableQuery(variable)).as(name).matches(LABEL_VALUES).endsWith(name + ")");
			if (variable.has("definition")) {
				assertThat(variable.path("definition").asString("")).as("what Grafana shows as %s's query", name)
					.isEqualTo(variableQuery(variable));
			}
		}
	}

	@Test
	void namesOnlyMetersAndLabelsTheGatewayExports() throws IOException {
		List<Query> queries = queries(dashboard());
		assertThat(queries).isNotEmpty();
		for (int i = 0; i < 10; i++) {
			assertThat(this.client.getNow("/catalog/").status()).isEqualTo(200);
			assertThat(this.client.getNow("/shop/").status()).isEqualTo(200);
		}
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			Map<String, Set<String>> exported = scrape();
			List<String> problems = new ArrayList<>();
			for (Query query : queries) {
				problems.addAll(problems(query, exported));
			}
			assertThat(problems)
				.as("queries of docs/grafana/gateway-lb.json against the scrape, which has %s",
						new TreeSet<>(exported.keySet().stream().filter(GrafanaDashboardIT::ours).toList()))
				.isEmpty();
		});
	}

	/**
	 * Returns what is wrong with one query: metric names the scrape does not have, and
	 * labels (in selectors, {@code by}/{@code on}/{@code ignoring} lists and the legend)
	 * that none of the query's metrics carries.
	 */
	private static List<String> problems(Query query, Map<String, Set<String>> exported) {
		List<String> problems = new ArrayList<>();
		String where = query.where() + ": " + query.expr();
		Parsed parsed = parse(query.expr());
		if (parsed.metrics().isEmpty()) {
			problems.add(where + " names no metric");
		}
		Set<String> labels = new HashSet<>();
		for (String metric : parsed.metrics()) {
			Set<String> carried = exported.get(metric);
			if (carried == null) {
				problems.add(where + " names " + metric + ", which the gateway does not export");
			}
			else {
				labels.addAll(carried);
			}
		}
		parsed.selectorLabels().forEach((metric, selectorLabels) -> {
			Set<String> carried = exported.getOrDefault(metric, Set.of());
			selectorLabels.stream()
				.filter((label) -> exported.containsKey(metric) && !carried.contains(label))
				.forEach((label) -> problems
					.add(where + " selects " + metric + " by " + label + ", a label it does not have " + carried));
		});
		Set<String> wanted = new TreeSet<>(parsed.groupingLabels());
		Matcher legend = LEGEND_LABEL.matcher(query.legend());
		while (legend.find()) {
			wanted.add(legend.group(1));
		}
		if (query.label() != null) {
			wanted.add(query.label());
		}
		if (parsed.metrics().stream().allMatch(exported::containsKey)) {
			wanted.stream()
				.filter((label) -> !labels.contains(label))
				.forEach((label) -> problems.add(
						where + " uses the label " + label + ", which none of " + parsed.metrics() + " has " + labels));
		}
		return problems;
	}

	/**
	 * Returns the metric names and label names of a PromQL expression: string literals,
	 * Grafana variables, ranges and label lists are taken out first, so that what is left
	 * are identifiers, function calls and operators.
	 */
	static Parsed parse(String expr) {
		String rest = STRING.matcher(expr).replaceAll("\"\"");
		rest = GRAFANA_VARIABLE.matcher(rest).replaceAll("0");
		Map<String, Set<String>> selectorLabels = new TreeMap<>();
		Set<String> metrics = new LinkedHashSet<>();
		Matcher selector = SELECTOR.matcher(rest);
		StringBuilder withoutSelectors = new StringBuilder();
		while (selector.find()) {
			Set<String> labels = new TreeSet<>();
			Matcher matcher = MATCHER.matcher(selector.group(2));
			while (matcher.find()) {
				labels.add(matcher.group(1));
			}
			String metric = selector.group(1);
			if (metric != null && !PROMQL_WORDS.contains(metric)) {
				selectorLabels.computeIfAbsent(metric, (name) -> new TreeSet<>()).addAll(labels);
				selector.appendReplacement(withoutSelectors, Matcher.quoteReplacement(metric + " "));
			}
			else {
				selectorLabels.computeIfAbsent("", (name) -> new TreeSet<>()).addAll(labels);
				selector.appendReplacement(withoutSelectors, Matcher.quoteReplacement((metric != null) ? metric : ""));
			}
		}
		selector.appendTail(withoutSelectors);
		rest = RANGE.matcher(withoutSelectors).replaceAll(" ");
		Set<String> groupingLabels = new TreeSet<>();
		Matcher list = LABEL_LIST.matcher(rest);
		while (list.find()) {
			for (String label : list.group(1).split(",")) {
				if (!label.isBlank()) {
					groupingLabels.add(label.trim());
				}
			}
		}
		rest = LABEL_LIST.matcher(rest).replaceAll(" ");
		Matcher identifier = IDENTIFIER.matcher(rest);
		while (identifier.find()) {
			if (!PROMQL_WORDS.contains(identifier.group(1))) {
				metrics.add(identifier.group(1));
			}
		}
		Set<String> selected = selectorLabels.remove("");
		if (selected != null) {
			groupingLabels.addAll(selected);
		}
		return new Parsed(metrics, selectorLabels, groupingLabels);
	}

	/**
	 * Returns every query of the dashboard: each target of each panel, rows' nested
	 * panels included, and each variable's query ({@code label_values(metric, label)} is
	 * checked as the metric's expression and its label).
	 */
	private static List<Query> queries(JsonNode dashboard) {
		List<Query> queries = new ArrayList<>();
		for (JsonNode panel : panels(dashboard)) {
			for (JsonNode target : panel.path("targets")) {
				queries.add(new Query("panel \"" + title(panel) + "\" " + target.path("refId").asString(""),
						target.path("expr").asString(""), target.path("legendFormat").asString(""), null));
			}
		}
		for (JsonNode variable : dashboard.path("templating").path("list")) {
			if (!"query".equals(variable.path("type").asString(""))) {
				continue;
			}
			String where = "variable " + variable.path("name").asString("");
			String query = variableQuery(variable);
			Matcher labelValues = LABEL_VALUES.matcher(query);
			if (labelValues.matches()) {
				queries.add(new Query(where, labelValues.group(1), "", labelValues.group(2)));
			}
			else {
				queries.add(new Query(where, query.replaceFirst("^\\s*query_result\\((.*)\\)\\s*$", "$1"), "", null));
			}
		}
		return queries;
	}

	/**
	 * Returns every panel, those nested in collapsed rows included.
	 */
	private static List<JsonNode> panels(JsonNode dashboard) {
		List<JsonNode> panels = new ArrayList<>();
		collect(dashboard.path("panels"), panels);
		return panels;
	}

	private static void collect(JsonNode list, List<JsonNode> panels) {
		for (JsonNode panel : list) {
			panels.add(panel);
			collect(panel.path("panels"), panels);
		}
	}

	private static String title(JsonNode panel) {
		return panel.path("title").asString("");
	}

	private static String datasource(JsonNode node) {
		JsonNode datasource = node.path("datasource");
		return datasource.isString() ? datasource.asString() : datasource.path("uid").asString("");
	}

	/**
	 * Returns a variable's query: a string in older dashboards, an object in those of
	 * Grafana 10's Prometheus query editor.
	 */
	private static String variableQuery(JsonNode variable) {
		JsonNode query = variable.path("query");
		return query.isString() ? query.asString() : query.path("query").asString("");
	}

	/**
	 * Returns the names of every sample of {@code /actuator/prometheus}, with the labels
	 * each carries: the names Prometheus stores, suffixes ({@code _total},
	 * {@code _count}, ...) included.
	 */
	private Map<String, Set<String>> scrape() {
		GatewayClient.Answer answer = this.client.getNow("/actuator/prometheus");
		assertThat(answer.status()).isEqualTo(200);
		Map<String, Set<String>> samples = new HashMap<>();
		for (String line : answer.body().split("\n")) {
			if (line.isBlank() || line.startsWith("#")) {
				continue;
			}
			int brace = line.indexOf('{');
			int space = line.indexOf(' ');
			int end = (brace >= 0 && (space < 0 || brace < space)) ? brace : space;
			Set<String> labels = samples.computeIfAbsent(line.substring(0, end), (name) -> new TreeSet<>());
			if (end == brace) {
				Matcher label = SAMPLE_LABEL.matcher(line.substring(brace, line.lastIndexOf('}') + 1));
				while (label.find()) {
					labels.add(label.group(1));
				}
			}
		}
		return samples;
	}

	private static boolean ours(String metric) {
		return metric.startsWith("gateway_lb_") || metric.startsWith("reactor_netty_connection_provider_");
	}

	/**
	 * Reads the dashboard strictly: a duplicate key or anything after the object is an
	 * error, as it would be for some of the tools that read it.
	 */
	private static JsonNode dashboard() throws IOException {
		JsonMapper mapper = JsonMapper.builder()
			.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
			.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
			.build();
		JsonNode dashboard = mapper.readTree(Files.readString(locate()));
		assertThat(dashboard.isObject()).as("the dashboard is a JSON object").isTrue();
		return dashboard;
	}

	/**
	 * Finds the dashboard from wherever the build runs: the module (its parent holds
	 * {@code docs}), the project root, or a directory below either.
	 */
	private static Path locate() {
		for (Path directory = Path.of("").toAbsolutePath(); directory != null; directory = directory.getParent()) {
			Path candidate = directory.resolve(DASHBOARD);
			if (Files.isRegularFile(candidate)) {
				return candidate;
			}
		}
		throw new IllegalStateException(DASHBOARD + " not found above " + Path.of("").toAbsolutePath());
	}

	/**
	 * One query of the dashboard, where it is, its legend and, for a variable, the label
	 * it lists.
	 */
	record Query(String where, String expr, String legend, @Nullable String label) {

	}

	/**
	 * What a query names: its metrics, the labels its selectors match on per metric, and
	 * the labels it groups, joins or matches on elsewhere.
	 */
	record Parsed(Set<String> metrics, Map<String, Set<String>> selectorLabels, Set<String> groupingLabels) {

	}

}
