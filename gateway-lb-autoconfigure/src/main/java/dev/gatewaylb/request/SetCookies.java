package dev.gatewaylb.request;

import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Reads what a response's {@code Set-Cookie} lines do to one cookie: set it, expire it,
 * or leave it alone (RFC 6265 section 5.2).
 * <p>
 * Total: whatever the lines hold, it answers, never throws. Linear in the lines' length:
 * each line is scanned once for its name, and only a line that names the cookie is read
 * further, attribute by attribute. The last line that names the cookie decides, as a
 * browser applies them in order. A cookie is expired by {@code Max-Age} of 0 or less, or,
 * without {@code Max-Age}, by an {@code Expires} date that is not after {@code now}; an
 * {@code Expires} that cannot be read is ignored, as browsers ignore it.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc6265#section-5.2">RFC 6265, section
 * 5.2</a>
 */
public final class SetCookies {

	private SetCookies() {
	}

	/**
	 * What the lines do to a cookie.
	 */
	public enum Change {

		/**
		 * No line names it.
		 */
		NONE,

		/**
		 * The last line that names it sets it.
		 */
		SET,

		/**
		 * The last line that names it expires it.
		 */
		EXPIRED

	}

	/**
	 * Returns what the {@code Set-Cookie} lines do to the cookie called {@code name}.
	 * @param lines the values of every {@code Set-Cookie} header, or {@code null}
	 * @param name the cookie name, matched exactly
	 * @param now the time an {@code Expires} date is compared with
	 * @return the change
	 */
	public static Change of(@Nullable List<String> lines, String name, Instant now) {
		if (lines == null) {
			return Change.NONE;
		}
		Change change = Change.NONE;
		for (String line : lines) {
			if (line != null && names(line, name)) {
				change = expired(line, now) ? Change.EXPIRED : Change.SET;
			}
		}
		return change;
	}

	/**
	 * Returns whether the line's name-value pair has the name.
	 */
	private static boolean names(String line, String name) {
		int start = skipBlanks(line, 0, line.length());
		int end = start;
		while (end < line.length() && line.charAt(end) != '=' && line.charAt(end) != ';') {
			end++;
		}
		if (end >= line.length() || line.charAt(end) != '=') {
			return false;
		}
		int nameEnd = end;
		while (nameEnd > start && isBlank(line.charAt(nameEnd - 1))) {
			nameEnd--;
		}
		return nameEnd - start == name.length() && line.regionMatches(start, name, 0, name.length());
	}

	private static boolean expired(String line, Instant now) {
		@Nullable Boolean byMaxAge = null;
		@Nullable Boolean byExpires = null;
		int at = line.indexOf(';');
		while (at >= 0 && at < line.length()) {
			int next = line.indexOf(';', at + 1);
			int end = (next < 0) ? line.length() : next;
			String attribute = line.substring(at + 1, end).trim();
			int equals = attribute.indexOf('=');
			String key = ((equals < 0) ? attribute : attribute.substring(0, equals)).trim().toLowerCase(Locale.ROOT);
			String value = (equals < 0) ? "" : attribute.substring(equals + 1).trim();
			if (key.equals("max-age")) {
				byMaxAge = maxAgeExpires(value, byMaxAge);
			}
			else if (key.equals("expires")) {
				byExpires = expiresBy(value, now, byExpires);
			}
			at = next;
		}
		// Max-Age wins over Expires (RFC 6265 section 5.3, step 3).
		if (byMaxAge != null) {
			return byMaxAge;
		}
		return byExpires != null && byExpires;
	}

	/**
	 * Returns whether a {@code Max-Age} value expires the cookie, or {@code previous}
	 * when the value is not a number (the attribute is then ignored).
	 */
	private static @Nullable Boolean maxAgeExpires(String value, @Nullable Boolean previous) {
		if (value.isEmpty()) {
			return previous;
		}
		int start = (value.charAt(0) == '-') ? 1 : 0;
		if (start == value.length()) {
			return previous;
		}
		for (int i = start; i < value.length(); i++) {
			if (value.charAt(i) < '0' || value.charAt(i) > '9') {
				return previous;
			}
		}
		if (start == 1) {
			return true;
		}
		for (int i = 0; i < value.length(); i++) {
			if (value.charAt(i) != '0') {
				return false;
			}
		}
		return true;
	}

	private static @Nullable Boolean expiresBy(String value, Instant now, @Nullable Boolean previous) {
		try {
			return !ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().isAfter(now);
		}
		catch (DateTimeParseException ex) {
			return previous;
		}
	}

	private static int skipBlanks(String line, int from, int to) {
		while (from < to && isBlank(line.charAt(from))) {
			from++;
		}
		return from;
	}

	private static boolean isBlank(char c) {
		return c == ' ' || c == '\t';
	}

}
