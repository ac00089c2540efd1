package dev.gatewaylb.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * Turns a JMH result file ({@code -rf csv}) into the markdown tables of
 * {@code docs/benchmarks.md}: every score with its error and its allocation per
 * operation, the ratios against Spring Cloud LoadBalancer measured in the same run, and
 * the request path against its targets.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.gatewaylb.benchmarks.Report results.csv}
 */
public final class Report {

	private static final String PACKAGE = "dev.gatewaylb.benchmarks.";

	/**
	 * The package of the benchmarks that live beside the classes they measure, such as
	 * {@code gateway.filter.RequestPathBenchmark} in gateway-lb-autoconfigure's test tree
	 * ({@code benchmarks/request-path.sh}).
	 */
	private static final String PROJECT_PACKAGE = "dev.gatewaylb.";

	private static final String REQUEST_PATH = "gateway.filter.RequestPathBenchmark";

	private static final double REQUEST_PATH_NANOS = 100;

	private static final long REQUEST_PATH_BYTES = 144;

	private static final String ALLOCATION = "gc.alloc.rate.norm";

	private final List<Row> rows;

	private Report(List<Row> rows) {
		this.rows = rows;
	}

	public static void main(String[] args) throws IOException {
		if (args.length != 1) {
			throw new IllegalArgumentException("usage: Report results.csv");
		}
		System.out.print(new Report(read(Path.of(args[0]))).render());
	}

	String render() {
		StringBuilder out = new StringBuilder();
		out.append("Cells: score ± error (99.9%), and allocation per operation from -prof gc.\n\n");
		for (String method : List.of("select", "selectTwoThreads")) {
			matrix(out, "Pick, `PickBenchmark." + method + "` (ns per pick)", "core.PickBenchmark", method, "algorithm",
					"endpoints");
		}
		matrix(out, "Least-requests with every endpoint busy, the full scan (ns per pick)", "core.BusyScanBenchmark",
				null, null, "endpoints");
		matrix(out, "Round-robin from 3 to 100,000 endpoints, weights 1 to 5 (ns per pick)",
				"core.RoundRobinScaleBenchmark", null, null, "endpoints");
		matrix(out, "Pick with in-flight accounting: select, acquire, release (ns)", "core.InFlightBenchmark", null,
				"algorithm", "endpoints");
		matrix(out, "Rebuild on a discovery change (us)", "core.RebuildBenchmark", "update", "algorithm", "endpoints");
		matrix(out, "Split and affinity cookie (ns)", "core.SplitBenchmark", null, null, null);
		matrix(out, "Spring-level choose (ns per choose)", "spring.ChooseBenchmark", null, null, "endpoints");
		matrix(out, "Request path: lease, owner, pick, attempt, upstream callbacks, release (ns per request)",
				(row) -> row.benchmark.startsWith(REQUEST_PATH + "."), true, "algorithm", "endpoints");
		ratios(out);
		requestPathTargets(out);
		return out.toString();
	}

	/**
	 * One table of a benchmark class: a row per method (unless {@code method} selects
	 * one) and row parameter, a column per value of the column parameter.
	 */
	private void matrix(StringBuilder out, String title, String benchmarkClass, @Nullable String method,
			@Nullable String rowParam, @Nullable String columnParam) {
		matrix(out, title, (row) -> (method != null) ? row.benchmark.equals(benchmarkClass + "." + method)
				: row.benchmark.startsWith(benchmarkClass + "."), method == null, rowParam, columnParam);
	}

	/**
	 * One table of the rows {@code filter} selects: a row per method (if
	 * {@code methodRows}) and row parameter, a column per value of the column parameter.
	 */
	private void matrix(StringBuilder out, String title, Predicate<Row> filter, boolean methodRows,
			@Nullable String rowParam, @Nullable String columnParam) {
		List<Row> selected = primary(filter);
		if (selected.isEmpty()) {
			return;
		}
		Set<String> columns = new LinkedHashSet<>();
		Map<String, Map<String, Row>> table = new LinkedHashMap<>();
		for (Row row : selected) {
			String name = row.benchmark.substring(row.benchmark.lastIndexOf('.') + 1);
			String rowKey = (methodRows ? name + " " : "") + ((rowParam != null) ? row.param(rowParam) : "");
			String column = (columnParam != null) ? row.param(columnParam) : "";
			columns.add(column);
			table.computeIfAbsent(rowKey.trim(), (k) -> new LinkedHashMap<>()).put(column, row);
		}
		out.append("### ").append(title).append("\n\n|   |");
		for (String column : columns) {
			out.append(' ').append(column.isEmpty() ? "result" : columnParam + " " + column).append(" |");
		}
		out.append("\n|---|");
		out.append("---|".repeat(columns.size())).append('\n');
		table.forEach((rowKey, cells) -> {
			out.append("| ").append(rowKey).append(" |");
			for (String column : columns) {
				Row cell = cells.get(column);
				out.append(' ').append((cell != null) ? cell(cell) : "").append(" |");
			}
			out.append('\n');
		});
		out.append('\n');
	}

	private void ratios(StringBuilder out) {
		List<String[]> lines = new ArrayList<>();
		for (Row peer : primary((row) -> row.benchmark.endsWith("ChooseBenchmark.sclbRoundRobin"))) {
			String n = peer.param("endpoints");
			Row core = find("core.PickBenchmark.select", Map.of("algorithm", "ROUND_ROBIN", "endpoints", n));
			if (core != null) {
				lines.add(ratio("core round-robin select vs `RoundRobinLoadBalancer.choose()`", n, core, peer));
			}
			Row ours = find("spring.ChooseBenchmark.gatewayLbChoose", Map.of("endpoints", n));
			if (ours != null) {
				lines.add(ratio("gateway-lb `ServiceBalancer.choose()` vs `RoundRobinLoadBalancer.choose()`", n, ours,
						peer));
			}
		}
		for (Row peer : primary((row) -> row.benchmark.equals(REQUEST_PATH + ".sclbRoundRobin"))) {
			requestPathRatios(lines, peer, "requestPath", "");
		}
		for (Row peer : primary((row) -> row.benchmark.endsWith("ChooseBenchmark.sclbRandom"))) {
			String n = peer.param("endpoints");
			Row core = find("core.PickBenchmark.select", Map.of("algorithm", "POWER_OF_TWO_CHOICES", "endpoints", n));
			if (core != null) {
				lines.add(ratio("core power-of-two-choices select vs `RandomLoadBalancer.choose()`", n, core, peer));
			}
		}
		for (Row peer : primary((row) -> row.benchmark.endsWith("ChooseBenchmark.sclbRoundRobinTwoThreads"))) {
			String n = peer.param("endpoints");
			Row core = find("core.PickBenchmark.selectTwoThreads", Map.of("algorithm", "ROUND_ROBIN", "endpoints", n));
			if (core != null) {
				lines.add(ratio("2 threads: core round-robin select vs `RoundRobinLoadBalancer.choose()`", n, core,
						peer));
			}
			Row ours = find("spring.ChooseBenchmark.gatewayLbChooseTwoThreads", Map.of("endpoints", n));
			if (ours != null) {
				lines.add(ratio("2 threads: `ServiceBalancer.choose()` vs `RoundRobinLoadBalancer.choose()`", n, ours,
						peer));
			}
		}
		for (Row peer : primary((row) -> row.benchmark.equals(REQUEST_PATH + ".sclbRoundRobinTwoThreads"))) {
			requestPathRatios(lines, peer, "requestPathTwoThreads", "2 threads: ");
		}
		if (lines.isEmpty()) {
			return;
		}
		out.append("### Against Spring Cloud LoadBalancer, same run\n\n")
			.append("| comparison | endpoints | ours | peer | peer / ours |\n|---|---|---|---|---|\n");
		for (String[] line : lines) {
			out.append("| ").append(String.join(" | ", line)).append(" |\n");
		}
		out.append('\n');
	}

	/**
	 * Adds a line per algorithm of the request path measured beside {@code peer}, its
	 * {@code RoundRobinLoadBalancer.choose()} of the same run and endpoint count.
	 */
	private void requestPathRatios(List<String[]> lines, Row peer, String method, String prefix) {
		String n = peer.param("endpoints");
		for (Row ours : primary((row) -> row.benchmark.equals(REQUEST_PATH + "." + method))) {
			if (n.equals(ours.param("endpoints"))) {
				String algorithm = ours.param("algorithm").toLowerCase(Locale.ROOT).replace('_', '-');
				lines.add(ratio(prefix + "request path, " + algorithm + ", vs `RoundRobinLoadBalancer.choose()`", n,
						ours, peer));
			}
		}
	}

	/**
	 * The request path's rows against its targets: at most {@value #REQUEST_PATH_NANOS}
	 * ns and {@value #REQUEST_PATH_BYTES} B per request.
	 */
	private void requestPathTargets(StringBuilder out) {
		List<Row> rows = primary(
				(row) -> row.benchmark.startsWith(REQUEST_PATH + ".requestPath") && secondary(row, ALLOCATION) != null);
		if (rows.isEmpty()) {
			return;
		}
		out.append("### Request path against its targets\n\n")
			.append("At most ")
			.append(number(REQUEST_PATH_NANOS))
			.append(" ns and ")
			.append(REQUEST_PATH_BYTES)
			.append(" B per request (what the lease and the attempt took before the exchange had an owner).\n\n")
			.append("| row | algorithm | endpoints | ns per request | <= ")
			.append(number(REQUEST_PATH_NANOS))
			.append(" ns | B per request | <= ")
			.append(REQUEST_PATH_BYTES)
			.append(" B |\n")
			.append("|---|---|---|---|---|---|---|\n");
		for (Row row : rows) {
			long bytes = Math.round(secondary(row, ALLOCATION).score);
			out.append("| ")
				.append(row.benchmark.substring(row.benchmark.lastIndexOf('.') + 1))
				.append(" | ")
				.append(row.param("algorithm"))
				.append(" | ")
				.append(row.param("endpoints"))
				.append(" | ")
				.append(number(row.score))
				.append((Double.isNaN(row.error)) ? "" : " ± " + number(row.error))
				.append(" | ")
				.append((row.score <= REQUEST_PATH_NANOS) ? "yes" : "**no**")
				.append(" | ")
				.append(bytes)
				.append(" | ")
				.append((bytes <= REQUEST_PATH_BYTES) ? "yes" : "**no**")
				.append(" |\n");
		}
		out.append('\n');
	}

	private String[] ratio(String what, String endpoints, Row ours, Row peer) {
		return new String[] { what, endpoints, cell(ours), cell(peer),
				String.format(Locale.ROOT, "%.1fx", peer.score / ours.score) };
	}

	private String cell(Row row) {
		StringBuilder cell = new StringBuilder(number(row.score));
		if (!Double.isNaN(row.error)) {
			cell.append(" ± ").append(number(row.error));
		}
		Row allocation = secondary(row, ALLOCATION);
		if (allocation != null) {
			cell.append(" (").append(Math.round(allocation.score)).append(" B)");
		}
		return cell.toString();
	}

	private static String number(double value) {
		if (value >= 100) {
			return String.format(Locale.ROOT, "%.0f", value);
		}
		return String.format(Locale.ROOT, (value >= 10) ? "%.1f" : "%.2f", value);
	}

	private @Nullable Row find(String benchmark, Map<String, String> params) {
		for (Row row : primary((candidate) -> candidate.benchmark.equals(benchmark))) {
			if (params.entrySet().stream().allMatch((e) -> e.getValue().equals(row.param(e.getKey())))) {
				return row;
			}
		}
		return null;
	}

	private @Nullable Row secondary(Row primary, String metric) {
		for (Row row : this.rows) {
			if (metric.equals(row.metric) && row.benchmark.equals(primary.benchmark)
					&& row.params.equals(primary.params)) {
				return row;
			}
		}
		return null;
	}

	private List<Row> primary(Predicate<Row> filter) {
		return this.rows.stream().filter((row) -> row.metric == null).filter(filter).toList();
	}

	static List<Row> read(Path csv) throws IOException {
		List<String> lines = Files.readAllLines(csv);
		List<String> header = fields(lines.get(0));
		List<Row> rows = new ArrayList<>();
		for (String line : lines.subList(1, lines.size())) {
			if (line.isBlank()) {
				continue;
			}
			List<String> fields = fields(line);
			String name = fields.get(header.indexOf("Benchmark"));
			String metric = null;
			int colon = name.indexOf(':');
			if (colon >= 0) {
				metric = name.substring(colon + 1).replace("\u00b7", "");
				name = name.substring(0, colon);
			}
			Map<String, String> params = new LinkedHashMap<>();
			for (int i = 0; i < header.size(); i++) {
				if (header.get(i).startsWith("Param: ") && i < fields.size() && !fields.get(i).isEmpty()) {
					params.put(header.get(i).substring("Param: ".length()), fields.get(i));
				}
			}
			rows.add(new Row(shortName(name), metric, parse(fields.get(header.indexOf("Score"))),
					parse(fields.get(header.indexOf("Score Error (99.9%)"))), params));
		}
		return rows;
	}

	/**
	 * Returns a benchmark's name without {@value #PACKAGE} ({@code core.PickBenchmark})
	 * or, for those beside the classes they measure, {@value #PROJECT_PACKAGE}
	 * ({@code gateway.filter.RequestPathBenchmark}).
	 */
	private static String shortName(String name) {
		if (name.startsWith(PACKAGE)) {
			return name.substring(PACKAGE.length());
		}
		return name.startsWith(PROJECT_PACKAGE) ? name.substring(PROJECT_PACKAGE.length()) : name;
	}

	private static double parse(String number) {
		return number.isEmpty() ? Double.NaN : Double.parseDouble(number.replace(',', '.'));
	}

	/**
	 * Splits one CSV line; JMH quotes text and never puts a quote inside a field.
	 */
	private static List<String> fields(String line) {
		List<String> fields = new ArrayList<>();
		StringBuilder field = new StringBuilder();
		boolean quoted = false;
		for (int i = 0; i < line.length(); i++) {
			char c = line.charAt(i);
			if (c == '"') {
				quoted = !quoted;
			}
			else if (c == ',' && !quoted) {
				fields.add(field.toString());
				field.setLength(0);
			}
			else {
				field.append(c);
			}
		}
		fields.add(field.toString());
		return fields;
	}

	record Row(String benchmark, @Nullable String metric, double score, double error, Map<String, String> params) {

		String param(String name) {
			return this.params.getOrDefault(name, "");
		}

	}

}
