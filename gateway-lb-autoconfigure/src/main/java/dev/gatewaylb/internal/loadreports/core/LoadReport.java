package dev.gatewaylb.internal.loadreports.core;

import java.util.List;
import java.util.Map;

/**
 * What an endpoint said of its own load in one answer (ORCA's {@code OrcaLoadReport}):
 * each standard field {@link #ABSENT} when not reported, the named metrics by name.
 *
 * @param applicationUtilization {@code application_utilization}, 0 and up
 * @param cpuUtilization {@code cpu_utilization}, 0 and up (above 1 on a machine whose
 * reporting counts cores)
 * @param memUtilization {@code mem_utilization}, 0 to 1
 * @param rpsFractional {@code rps_fractional}: the queries per second it served
 * @param eps {@code eps}: the errors per second it gave
 * @param namedMetrics {@code named_metrics}, such as a KV-cache utilization
 */
public record LoadReport(double applicationUtilization, double cpuUtilization, double memUtilization,
		double rpsFractional, double eps, Map<String, Double> namedMetrics) implements LoadReportParser.Parsed {

	/**
	 * The value of a standard field that was not reported.
	 */
	public static final double ABSENT = -1;

	/**
	 * The standard field names a {@code utilization} setting may list.
	 */
	public static final List<String> UTILIZATION_FIELDS = List.of("application_utilization", "cpu_utilization",
			"mem_utilization");

	/**
	 * The prefix of a named metric in a {@code utilization} setting and in TEXT reports.
	 */
	public static final String NAMED_PREFIX = "named_metrics.";

	public LoadReport {
		namedMetrics = Map.copyOf(namedMetrics);
	}

	/**
	 * Returns a standard field by its ORCA name, {@link #ABSENT} for a name it is not.
	 * @param field {@code application_utilization}, {@code cpu_utilization} or
	 * {@code mem_utilization}
	 * @return the value
	 */
	public double field(String field) {
		return switch (field) {
			case "application_utilization" -> this.applicationUtilization;
			case "cpu_utilization" -> this.cpuUtilization;
			case "mem_utilization" -> this.memUtilization;
			default -> ABSENT;
		};
	}

	/**
	 * Returns the endpoint's utilization as a {@code utilization} setting reads it: when
	 * it lists named metrics, the largest of those reported (gRFC A114), and the standard
	 * fields only if none is; the standard fields in the order listed, the first reported
	 * above 0. 0 when nothing usable was reported (the endpoint then takes the mean
	 * weight).
	 * @param utilization the fields, in order: standard names and
	 * {@code named_metrics.<name>}
	 * @return the utilization, or 0
	 */
	public double utilization(List<String> utilization) {
		double named = 0;
		boolean anyNamed = false;
		for (String field : utilization) {
			if (field.startsWith(NAMED_PREFIX)) {
				Double value = this.namedMetrics.get(field.substring(NAMED_PREFIX.length()));
				if (value != null) {
					anyNamed = true;
					named = Math.max(named, value);
				}
			}
		}
		if (anyNamed && named > 0) {
			return named;
		}
		for (String field : utilization) {
			if (!field.startsWith(NAMED_PREFIX)) {
				double value = field(field);
				if (value > 0) {
					return value;
				}
			}
		}
		return 0;
	}

}
