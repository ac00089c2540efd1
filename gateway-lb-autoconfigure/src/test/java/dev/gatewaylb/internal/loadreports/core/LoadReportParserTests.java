package dev.gatewaylb.internal.loadreports.core;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ORCA's {@code endpoint-load-metrics} in its three forms, and what is refused: every
 * field read, named metrics kept, garbage refused whole with its reason.
 */
class LoadReportParserTests {

	@Test
	void readsTheTextForm() {
		LoadReport report = report(LoadReportParser
			.parse("TEXT cpu_utilization=0.3, mem_utilization=0.8, application_utilization=0.55,rps_fractional=10.0,"
					+ " eps=1, named_metrics.kv_cache=0.42 "));
		assertThat(report).isEqualTo(new LoadReport(0.55, 0.3, 0.8, 10.0, 1, Map.of("kv_cache", 0.42)));
	}

	@Test
	void readsTheJsonFormInSnakeAndCamelCaseAndSkipsTheOtherMaps() {
		LoadReport snake = report(LoadReportParser.parse("JSON {\"cpu_utilization\": 0.3, \"mem_utilization\": 0.8,"
				+ " \"rps_fractional\": 10.0, \"eps\": 1, \"named_metrics\": {\"kv_cache\": 0.42, \"queue\": 7},"
				+ " \"request_cost\": {\"db\": 12.5}}"));
		assertThat(snake)
			.isEqualTo(new LoadReport(LoadReport.ABSENT, 0.3, 0.8, 10.0, 1, Map.of("kv_cache", 0.42, "queue", 7.0)));
		LoadReport camel = report(
				LoadReportParser.parse("JSON {\"applicationUtilization\":0.5,\"namedMetrics\":{\"kv_cache\":0.25}}"));
		assertThat(camel).isEqualTo(new LoadReport(0.5, LoadReport.ABSENT, LoadReport.ABSENT, LoadReport.ABSENT,
				LoadReport.ABSENT, Map.of("kv_cache", 0.25)));
		assertThat(report(LoadReportParser.parse("JSON {}")).namedMetrics()).isEmpty();
	}

	@Test
	void readsTheBinaryProtoInBothHeaders() {
		byte[] proto = proto();
		String base64 = Base64.getEncoder().encodeToString(proto);
		LoadReport expected = new LoadReport(0.6, 0.25, 0.5, 20.0, 2.0, Map.of("kv_cache", 0.9));
		assertThat(report(LoadReportParser.parseBinary(base64))).isEqualTo(expected);
		assertThat(report(LoadReportParser.parse("BIN " + base64))).isEqualTo(expected);
	}

	@Test
	void decimalsAreReadExactlyAsTheJdkReadsThem() {
		for (String decimal : new String[] { "0", "0.0", "1", "0.1", "0.3", "0.123456789012345", "123.456", "1e-3",
				"2.5E2", "0.000000000000000000001", "12345678901234567890", "00.50", "+0.25" }) {
			assertThat(LoadReportParser.number(decimal, 0, decimal.length())).as(decimal)
				.isEqualTo(Double.parseDouble(decimal));
		}
		assertThat(LoadReportParser.number("1d", 0, 2)).as("a Java suffix is no number").isNaN();
		assertThat(LoadReportParser.number("0x1p3", 0, 5)).isNaN();
	}

	@Test
	void garbageIsRefusedWholeWithItsReason() {
		assertThat(LoadReportParser.parse("cpu_utilization=0.3")).isEqualTo(LoadReportParser.Rejection.UNPARSEABLE);
		assertThat(LoadReportParser.parse("TEXT cpu_utilization")).isEqualTo(LoadReportParser.Rejection.UNPARSEABLE);
		assertThat(LoadReportParser.parse("TEXT cpu_utilization=")).isEqualTo(LoadReportParser.Rejection.UNPARSEABLE);
		assertThat(LoadReportParser.parse("TEXT cpu_utilization=abc"))
			.isEqualTo(LoadReportParser.Rejection.NOT_A_NUMBER);
		assertThat(LoadReportParser.parse("TEXT cpu_utilization=NaN"))
			.isEqualTo(LoadReportParser.Rejection.NOT_A_NUMBER);
		assertThat(LoadReportParser.parse("TEXT eps=Infinity")).isEqualTo(LoadReportParser.Rejection.NOT_A_NUMBER);
		assertThat(LoadReportParser.parse("TEXT cpu_utilization=0.5, eps=-1"))
			.isEqualTo(LoadReportParser.Rejection.NEGATIVE);
		assertThat(LoadReportParser.parse("TEXT mem_utilization=1.5"))
			.isEqualTo(LoadReportParser.Rejection.OUT_OF_RANGE);
		assertThat(LoadReportParser.parse("JSON {\"cpu_utilization\": 0.3"))
			.isEqualTo(LoadReportParser.Rejection.UNPARSEABLE);
		assertThat(LoadReportParser.parse("JSON {\"named_metrics\": {\"x\": -2}}"))
			.isEqualTo(LoadReportParser.Rejection.NEGATIVE);
		assertThat(LoadReportParser.parseBinary("not base64!")).isEqualTo(LoadReportParser.Rejection.UNPARSEABLE);
		assertThat(LoadReportParser.parseBinary(Base64.getEncoder().encodeToString(new byte[] { 0x09, 1, 2 })))
			.as("a truncated double")
			.isEqualTo(LoadReportParser.Rejection.UNPARSEABLE);
		assertThat(LoadReportParser.Rejection.NOT_A_NUMBER.tag()).isEqualTo("not-a-number");
	}

	@Test
	void unknownTextFieldsOfANewerReportAreSkipped() {
		assertThat(report(LoadReportParser.parse("TEXT cpu_utilization=0.4, future_field=3")).cpuUtilization())
			.isEqualTo(0.4);
	}

	private static LoadReport report(LoadReportParser.Parsed parsed) {
		assertThat(parsed).isInstanceOf(LoadReport.class);
		return (LoadReport) parsed;
	}

	/**
	 * An OrcaLoadReport: cpu 0.25 (1), mem 0.5 (2), rps 20 (3, the deprecated integer),
	 * named_metrics kv_cache 0.9 (8), rps_fractional 20.0 (6), eps 2.0 (7),
	 * application_utilization 0.6 (9).
	 */
	private static byte[] proto() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		fixed64(out, 1, 0.25);
		fixed64(out, 2, 0.5);
		out.write(3 << 3);
		out.write(20);
		ByteArrayOutputStream entry = new ByteArrayOutputStream();
		byte[] key = "kv_cache".getBytes(StandardCharsets.UTF_8);
		entry.write(1 << 3 | 2);
		entry.write(key.length);
		entry.writeBytes(key);
		fixed64(entry, 2, 0.9);
		out.write(8 << 3 | 2);
		out.write(entry.size());
		out.writeBytes(entry.toByteArray());
		fixed64(out, 6, 20.0);
		fixed64(out, 7, 2.0);
		fixed64(out, 9, 0.6);
		return out.toByteArray();
	}

	private static void fixed64(ByteArrayOutputStream out, int field, double value) {
		out.write(field << 3 | 1);
		out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(value).array());
	}

}
