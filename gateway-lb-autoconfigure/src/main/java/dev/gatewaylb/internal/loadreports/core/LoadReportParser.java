package dev.gatewaylb.internal.loadreports.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Reads ORCA's {@code endpoint-load-metrics} header in its three forms:
 * {@code TEXT cpu_utilization=0.3, named_metrics.kv_cache=0.8}, {@code JSON {...}} (the
 * proto's JSON, field names in snake or camel case) and {@code BIN <base64 proto>}; and
 * {@code endpoint-load-metrics-bin}, the base64 proto alone, as a gRPC backend sends it
 * in its trailers.
 * <p>
 * Called on the event loop for every answer of a service that reads reports: a TEXT or
 * JSON value is read in place, its decimals by Clinger's fast path (exact for up to 15
 * significant digits and powers of ten up to 22, which covers every value a backend
 * writes; anything else goes to {@link Double#parseDouble}), so a report costs the
 * {@link LoadReport} and, when it names metrics, their map. A report that cannot be read,
 * or holds a NaN, an infinity, a negative value or a {@code mem_utilization} above 1, is
 * refused whole with its reason (a shared constant: no allocation).
 */
public final class LoadReportParser {

	/**
	 * The header ORCA's TEXT, JSON and BIN reports come in.
	 */
	public static final String HEADER = "endpoint-load-metrics";

	/**
	 * The header (or trailer) a gRPC backend sends its binary report in.
	 */
	public static final String BINARY_HEADER = "endpoint-load-metrics-bin";

	private static final double[] POWERS_OF_TEN = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
			1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

	private LoadReportParser() {
	}

	/**
	 * What reading a header gave: a {@link LoadReport}, or the {@link Rejection} that
	 * refused it.
	 */
	public sealed interface Parsed permits LoadReport, Rejection {

	}

	/**
	 * Why a report was refused: the {@code reason} tag of
	 * {@code gateway.lb.load-reports.rejected}.
	 */
	public enum Rejection implements Parsed {

		/**
		 * Not a report in any of the forms: an unknown prefix, a broken pair, JSON or
		 * proto.
		 */
		UNPARSEABLE,

		/**
		 * A value that is NaN or infinite.
		 */
		NOT_A_NUMBER,

		/**
		 * A negative value.
		 */
		NEGATIVE,

		/**
		 * A value above its field's range ({@code mem_utilization} above 1).
		 */
		OUT_OF_RANGE;

		/**
		 * Returns the meter tag's value, e.g. {@code not-a-number}.
		 * @return the tag
		 */
		public String tag() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	/**
	 * Reads an {@code endpoint-load-metrics} value.
	 * @param value the header's value
	 * @return the report, or why it was refused
	 */
	public static Parsed parse(CharSequence value) {
		int start = skipSpaces(value, 0);
		if (startsWith(value, start, "TEXT ")) {
			return text(value, start + 5);
		}
		if (startsWith(value, start, "JSON ")) {
			return json(value, start + 5);
		}
		if (startsWith(value, start, "BIN ")) {
			return binary(value.subSequence(skipSpaces(value, start + 4), value.length()).toString().trim());
		}
		return Rejection.UNPARSEABLE;
	}

	/**
	 * Reads an {@code endpoint-load-metrics-bin} value: the base64 of the proto.
	 * @param value the header's or trailer's value
	 * @return the report, or why it was refused
	 */
	public static Parsed parseBinary(CharSequence value) {
		return binary(value.toString().trim());
	}

	// TEXT: key=value pairs separated by commas; named_metrics.<name>=value.

	private static Parsed text(CharSequence value, int from) {
		Fields fields = new Fields();
		int at = from;
		int end = value.length();
		while (true) {
			at = skipSpaces(value, at);
			if (at >= end) {
				break;
			}
			int equals = indexOf(value, '=', at, end);
			if (equals < 0) {
				return Rejection.UNPARSEABLE;
			}
			int keyEnd = trimEnd(value, at, equals);
			int comma = indexOf(value, ',', equals + 1, end);
			int valueEnd = (comma < 0) ? end : comma;
			int valueStart = skipSpaces(value, equals + 1);
			int valueStop = trimEnd(value, valueStart, valueEnd);
			if (keyEnd == at || valueStop == valueStart) {
				return Rejection.UNPARSEABLE;
			}
			double number = number(value, valueStart, valueStop);
			Rejection rejection = fields.set(value, at, keyEnd, number);
			if (rejection != null) {
				return rejection;
			}
			if (comma < 0) {
				break;
			}
			at = comma + 1;
		}
		return fields.report();
	}

	// JSON: one object of numbers, and one nested object of named metrics.

	private static Parsed json(CharSequence value, int from) {
		Fields fields = new Fields();
		int[] position = { skipSpaces(value, from) };
		Rejection rejection = jsonObject(value, position, fields, false);
		if (rejection != null) {
			return rejection;
		}
		if (skipSpaces(value, position[0]) != value.length()) {
			return Rejection.UNPARSEABLE;
		}
		return fields.report();
	}

	private static @Nullable Rejection jsonObject(CharSequence value, int[] position, Fields fields, boolean named) {
		int at = position[0];
		int end = value.length();
		if (at >= end || value.charAt(at) != '{') {
			return Rejection.UNPARSEABLE;
		}
		at = skipSpaces(value, at + 1);
		if (at < end && value.charAt(at) == '}') {
			position[0] = at + 1;
			return null;
		}
		while (true) {
			if (at >= end || value.charAt(at) != '"') {
				return Rejection.UNPARSEABLE;
			}
			int keyStart = at + 1;
			int keyEnd = indexOf(value, '"', keyStart, end);
			if (keyEnd < 0) {
				return Rejection.UNPARSEABLE;
			}
			at = skipSpaces(value, keyEnd + 1);
			if (at >= end || value.charAt(at) != ':') {
				return Rejection.UNPARSEABLE;
			}
			at = skipSpaces(value, at + 1);
			if (at < end && value.charAt(at) == '{') {
				// A map: named_metrics is read, request_cost and utilization skipped.
				boolean isNamed = !named && (regionEquals(value, keyStart, keyEnd, "named_metrics")
						|| regionEquals(value, keyStart, keyEnd, "namedMetrics"));
				position[0] = at;
				Rejection rejection = jsonObject(value, position, isNamed ? fields : new Fields(), isNamed);
				if (rejection != null) {
					return rejection;
				}
				at = position[0];
			}
			else {
				int valueStart = at;
				while (at < end && value.charAt(at) != ',' && value.charAt(at) != '}') {
					at++;
				}
				int valueStop = trimEnd(value, valueStart, at);
				if (valueStop == valueStart) {
					return Rejection.UNPARSEABLE;
				}
				double number = number(value, valueStart, valueStop);
				Rejection rejection = named ? fields.named(value.subSequence(keyStart, keyEnd).toString(), number)
						: fields.set(value, keyStart, keyEnd, number);
				if (rejection != null) {
					return rejection;
				}
			}
			at = skipSpaces(value, at);
			if (at >= end) {
				return Rejection.UNPARSEABLE;
			}
			char c = value.charAt(at);
			if (c == '}') {
				position[0] = at + 1;
				return null;
			}
			if (c != ',') {
				return Rejection.UNPARSEABLE;
			}
			at = skipSpaces(value, at + 1);
		}
	}

	// The proto: OrcaLoadReport's fields by number and wire type.

	private static Parsed binary(String base64) {
		byte[] bytes;
		try {
			bytes = Base64.getDecoder().decode(base64);
		}
		catch (IllegalArgumentException ex) {
			try {
				bytes = Base64.getUrlDecoder().decode(base64);
			}
			catch (IllegalArgumentException again) {
				return Rejection.UNPARSEABLE;
			}
		}
		ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
		Fields fields = new Fields();
		try {
			while (buffer.hasRemaining()) {
				long tag = varint(buffer);
				int field = (int) (tag >>> 3);
				int wireType = (int) (tag & 7);
				Rejection rejection = null;
				if (wireType == 1) {
					double number = buffer.getDouble();
					rejection = switch (field) {
						case 1 -> fields.cpu(number);
						case 2 -> fields.mem(number);
						case 6 -> fields.rps(number);
						case 7 -> fields.eps(number);
						case 9 -> fields.application(number);
						default -> null;
					};
				}
				else if (wireType == 2) {
					int length = (int) varint(buffer);
					if (length < 0 || length > buffer.remaining()) {
						return Rejection.UNPARSEABLE;
					}
					ByteBuffer entry = buffer.slice(buffer.position(), length).order(ByteOrder.LITTLE_ENDIAN);
					buffer.position(buffer.position() + length);
					if (field == 8) {
						rejection = mapEntry(entry, fields);
					}
				}
				else if (wireType == 0) {
					varint(buffer);
				}
				else if (wireType == 5) {
					buffer.position(buffer.position() + 4);
				}
				else {
					return Rejection.UNPARSEABLE;
				}
				if (rejection != null) {
					return rejection;
				}
			}
		}
		catch (RuntimeException ex) {
			// A truncated buffer, an overlong varint: not a report.
			return Rejection.UNPARSEABLE;
		}
		return fields.report();
	}

	private static @Nullable Rejection mapEntry(ByteBuffer entry, Fields fields) {
		String key = null;
		// A proto map entry without a value holds the default, 0.
		double number = 0;
		while (entry.hasRemaining()) {
			long tag = varint(entry);
			int field = (int) (tag >>> 3);
			int wireType = (int) (tag & 7);
			if (field == 1 && wireType == 2) {
				int length = (int) varint(entry);
				byte[] name = new byte[length];
				entry.get(name);
				key = new String(name, StandardCharsets.UTF_8);
			}
			else if (field == 2 && wireType == 1) {
				number = entry.getDouble();
			}
			else {
				return Rejection.UNPARSEABLE;
			}
		}
		if (key == null) {
			return Rejection.UNPARSEABLE;
		}
		return fields.named(key, number);
	}

	private static long varint(ByteBuffer buffer) {
		long value = 0;
		for (int shift = 0; shift < 64; shift += 7) {
			byte b = buffer.get();
			value |= (long) (b & 0x7f) << shift;
			if ((b & 0x80) == 0) {
				return value;
			}
		}
		throw new IllegalArgumentException("varint too long");
	}

	// Numbers.

	/**
	 * Reads a decimal in place: Clinger's fast path when exact, else
	 * {@link Double#parseDouble}. NaN for what is not a number.
	 */
	static double number(CharSequence value, int start, int end) {
		int at = start;
		boolean negative = false;
		if (value.charAt(at) == '-' || value.charAt(at) == '+') {
			negative = value.charAt(at) == '-';
			at++;
		}
		long mantissa = 0;
		int digits = 0;
		int fraction = 0;
		boolean point = false;
		boolean any = false;
		for (; at < end; at++) {
			char c = value.charAt(at);
			if (c >= '0' && c <= '9') {
				any = true;
				if (mantissa == 0 && c == '0') {
					if (point) {
						fraction++;
					}
					continue;
				}
				if (digits == 15) {
					return slow(value, start, end);
				}
				mantissa = mantissa * 10 + (c - '0');
				digits++;
				if (point) {
					fraction++;
				}
			}
			else if (c == '.' && !point) {
				point = true;
			}
			else {
				// An exponent, "NaN", "Infinity", or garbage: the JDK decides.
				return slow(value, start, end);
			}
		}
		if (!any || fraction > 22) {
			return any ? slow(value, start, end) : Double.NaN;
		}
		double result = mantissa / POWERS_OF_TEN[fraction];
		return negative ? -result : result;
	}

	private static double slow(CharSequence value, int start, int end) {
		String text = value.subSequence(start, end).toString();
		// Double.parseDouble takes "1d", "0x1p3" and the like; a report does not.
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'
					|| "NaNInfinity".indexOf(c) >= 0)) {
				return Double.NaN;
			}
		}
		try {
			return Double.parseDouble(text);
		}
		catch (NumberFormatException ex) {
			return Double.NaN;
		}
	}

	// Characters.

	private static int skipSpaces(CharSequence value, int from) {
		int at = from;
		while (at < value.length() && (value.charAt(at) == ' ' || value.charAt(at) == '\t')) {
			at++;
		}
		return at;
	}

	private static int trimEnd(CharSequence value, int start, int end) {
		int at = end;
		while (at > start && (value.charAt(at - 1) == ' ' || value.charAt(at - 1) == '\t')) {
			at--;
		}
		return at;
	}

	private static int indexOf(CharSequence value, char c, int from, int end) {
		for (int at = from; at < end; at++) {
			if (value.charAt(at) == c) {
				return at;
			}
		}
		return -1;
	}

	private static boolean startsWith(CharSequence value, int at, String prefix) {
		return value.length() - at >= prefix.length() && regionEquals(value, at, at + prefix.length(), prefix);
	}

	private static boolean regionEquals(CharSequence value, int start, int end, String text) {
		if (end - start != text.length()) {
			return false;
		}
		for (int i = 0; i < text.length(); i++) {
			if (value.charAt(start + i) != text.charAt(i)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The fields read so far of one report.
	 */
	private static final class Fields {

		private double application = LoadReport.ABSENT;

		private double cpu = LoadReport.ABSENT;

		private double mem = LoadReport.ABSENT;

		private double rps = LoadReport.ABSENT;

		private double eps = LoadReport.ABSENT;

		private @Nullable Map<String, Double> named;

		/**
		 * Sets the field a key names (snake or camel case); unknown keys are skipped (a
		 * newer report's fields), named metrics kept.
		 */
		@Nullable Rejection set(CharSequence value, int start, int end, double number) {
			if (regionEquals(value, start, end, "cpu_utilization")
					|| regionEquals(value, start, end, "cpuUtilization")) {
				return cpu(number);
			}
			if (regionEquals(value, start, end, "mem_utilization")
					|| regionEquals(value, start, end, "memUtilization")) {
				return mem(number);
			}
			if (regionEquals(value, start, end, "application_utilization")
					|| regionEquals(value, start, end, "applicationUtilization")) {
				return application(number);
			}
			if (regionEquals(value, start, end, "rps_fractional") || regionEquals(value, start, end, "rpsFractional")) {
				return rps(number);
			}
			if (regionEquals(value, start, end, "eps")) {
				return eps(number);
			}
			if (end - start > LoadReport.NAMED_PREFIX.length()
					&& regionEquals(value, start, start + LoadReport.NAMED_PREFIX.length(), LoadReport.NAMED_PREFIX)) {
				return named(value.subSequence(start + LoadReport.NAMED_PREFIX.length(), end).toString(), number);
			}
			// A field of a newer report: skipped, its value still checked.
			return check(number);
		}

		@Nullable Rejection cpu(double number) {
			this.cpu = number;
			return check(number);
		}

		@Nullable Rejection mem(double number) {
			this.mem = number;
			Rejection invalid = check(number);
			return (invalid == null && number > 1) ? Rejection.OUT_OF_RANGE : invalid;
		}

		@Nullable Rejection application(double number) {
			this.application = number;
			return check(number);
		}

		@Nullable Rejection rps(double number) {
			this.rps = number;
			return check(number);
		}

		@Nullable Rejection eps(double number) {
			this.eps = number;
			return check(number);
		}

		@Nullable Rejection named(String name, double number) {
			Rejection invalid = check(number);
			if (invalid != null) {
				return invalid;
			}
			if (this.named == null) {
				this.named = new HashMap<>(4);
			}
			this.named.put(name, number);
			return null;
		}

		LoadReport report() {
			return new LoadReport(this.application, this.cpu, this.mem, this.rps, this.eps,
					(this.named != null) ? this.named : Map.of());
		}

		private static @Nullable Rejection check(double number) {
			if (Double.isNaN(number) || Double.isInfinite(number)) {
				return Rejection.NOT_A_NUMBER;
			}
			return (number < 0) ? Rejection.NEGATIVE : null;
		}

	}

}
