package dev.gatewaylb.internal.request;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads one cookie from a request's {@code Cookie} header lines the way RFC 6265 section
 * 5.4 sends them: {@code name=value} pairs separated by {@code ;}.
 * <p>
 * Lenient and total: whatever the bytes, it returns a value or {@code null}, never
 * throws. The first pair with the name wins, across all header lines in order (a browser
 * sends the most specific cookie first; Spring's cookie map keeps the last). Pairs
 * without {@code =} are skipped, names and values are trimmed of spaces and tabs, and a
 * value in double quotes loses them.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc6265#section-5.4">RFC 6265, section
 * 5.4</a>
 */
public final class Cookies {

	private Cookies() {
	}

	/**
	 * Returns the value of the first cookie called {@code name}.
	 * @param headerLines the values of every {@code Cookie} header, or {@code null}
	 * @param name the cookie name, matched exactly
	 * @return the value, possibly empty, or {@code null} when no pair has that name
	 */
	public static @Nullable String first(@Nullable List<? extends @Nullable CharSequence> headerLines, String name) {
		if (headerLines == null) {
			return null;
		}
		for (CharSequence line : headerLines) {
			String value = (line != null) ? first(line, name) : null;
			if (value != null) {
				return value;
			}
		}
		return null;
	}

	/**
	 * Returns the value of the first cookie called {@code name} in one header line.
	 * <p>
	 * Linear in the line's length: each pair is scanned once for its {@code ;} and its
	 * first {@code =}, so a search never runs past the pair it is in (an unbounded search
	 * for {@code =} would cross every later pair of a line of {@code ;} without
	 * {@code =}, quadratic in the line). The line is read through
	 * {@link CharSequence#charAt(int)} only, plus one
	 * {@link CharSequence#subSequence(int, int)} for the value returned.
	 * @param line one {@code Cookie} header value
	 * @param name the cookie name, matched exactly
	 * @return the value, possibly empty, or {@code null} when no pair has that name
	 */
	public static @Nullable String first(CharSequence line, String name) {
		long bounds = bounds(line, name);
		return (bounds == ABSENT) ? null : line.subSequence(start(bounds), end(bounds)).toString();
	}

	/**
	 * What {@link #bounds} returns when no pair has the name.
	 */
	public static final long ABSENT = -1;

	/**
	 * Returns where the value of the first cookie called {@code name} lies in one header
	 * line, read as {@link #first(CharSequence, String)} reads it, without copying it:
	 * for a caller that checks a value in place and allocates nothing.
	 * @param line one {@code Cookie} header value
	 * @param name the cookie name, matched exactly
	 * @return the value's start and end packed in one number ({@link #start},
	 * {@link #end}), or {@link #ABSENT}
	 */
	public static long bounds(CharSequence line, String name) {
		int length = line.length();
		int start = 0;
		while (start < length) {
			int end = start;
			int equals = -1;
			while (end < length) {
				char c = line.charAt(end);
				if (c == ';') {
					break;
				}
				if (c == '=' && equals < 0) {
					equals = end;
				}
				end++;
			}
			if (equals >= 0) {
				int nameStart = skipBlanks(line, start, equals);
				int nameEnd = trimBlanks(line, nameStart, equals);
				if (nameEnd - nameStart == name.length() && regionMatches(line, nameStart, name)) {
					int valueStart = skipBlanks(line, equals + 1, end);
					int valueEnd = trimBlanks(line, valueStart, end);
					if (valueEnd - valueStart >= 2 && line.charAt(valueStart) == '"'
							&& line.charAt(valueEnd - 1) == '"') {
						valueStart++;
						valueEnd--;
					}
					return ((long) valueStart << 32) | valueEnd;
				}
			}
			start = end + 1;
		}
		return ABSENT;
	}

	/**
	 * Returns where a value {@link #bounds} found starts.
	 * @param bounds what {@link #bounds} returned, not {@link #ABSENT}
	 * @return the index of its first character
	 */
	public static int start(long bounds) {
		return (int) (bounds >>> 32);
	}

	/**
	 * Returns where a value {@link #bounds} found ends.
	 * @param bounds what {@link #bounds} returned, not {@link #ABSENT}
	 * @return the index after its last character
	 */
	public static int end(long bounds) {
		return (int) bounds;
	}

	private static boolean regionMatches(CharSequence line, int from, String name) {
		for (int i = 0; i < name.length(); i++) {
			if (line.charAt(from + i) != name.charAt(i)) {
				return false;
			}
		}
		return true;
	}

	private static int skipBlanks(CharSequence line, int from, int to) {
		while (from < to && isBlank(line.charAt(from))) {
			from++;
		}
		return from;
	}

	private static int trimBlanks(CharSequence line, int from, int to) {
		while (to > from && isBlank(line.charAt(to - 1))) {
			to--;
		}
		return to;
	}

	private static boolean isBlank(char c) {
		return c == ' ' || c == '\t';
	}

}
