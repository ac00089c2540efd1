package dev.gatewaylb.internal.request;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
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
 * without {@code Max-Age}, by an {@code Expires} date that is not after {@code now}, read
 * as browsers read it ({@link #cookieDate}); an {@code Expires} that cannot be read is
 * ignored, as browsers ignore it.
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
		Instant expires = cookieDate(value);
		if (expires == null) {
			return previous;
		}
		return !expires.isAfter(now);
	}

	private static final String[] MONTHS = { "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
			"nov", "dec" };

	/**
	 * Reads a date as browsers read an {@code Expires} value (RFC 6265 section 5.1.1):
	 * tokens split by any character that is not a letter, a digit or a colon; the first
	 * {@code h:m:s}, the first day of one or two digits, the first month by its first
	 * three letters and the first year of two to four digits, in any order; a year below
	 * 70 is 20xx and one from 70 to 99 19xx. So {@code Thu, 01-Jan-1970 00:00:10 GMT}
	 * (Tomcat's legacy cookies) reads as well as RFC 1123, and a wrong weekday does not
	 * matter.
	 * @param value the attribute's value
	 * @return the instant, or {@code null} when it is not a date
	 */
	static @Nullable Instant cookieDate(String value) {
		int hour = -1;
		int minute = -1;
		int second = -1;
		int day = -1;
		int month = -1;
		int year = -1;
		int at = 0;
		int length = value.length();
		while (at < length) {
			while (at < length && !isDateChar(value.charAt(at))) {
				at++;
			}
			int start = at;
			while (at < length && isDateChar(value.charAt(at))) {
				at++;
			}
			if (start == at) {
				break;
			}
			String token = value.substring(start, at);
			int[] time = (hour < 0) ? time(token) : null;
			int digits = leadingDigits(token);
			if (time != null) {
				hour = time[0];
				minute = time[1];
				second = time[2];
			}
			else if (day < 0 && digits >= 1 && digits <= 2) {
				day = Integer.parseInt(token, 0, digits, 10);
			}
			else if (month < 0 && monthOf(token) >= 0) {
				month = monthOf(token);
			}
			else if (year < 0 && digits >= 2 && digits <= 4) {
				year = Integer.parseInt(token, 0, digits, 10);
			}
		}
		if (year >= 70 && year <= 99) {
			year += 1900;
		}
		else if (year >= 0 && year <= 69) {
			year += 2000;
		}
		if (hour < 0 || day < 1 || day > 31 || month < 0 || year < 1601 || hour > 23 || minute > 59 || second > 59) {
			return null;
		}
		try {
			return LocalDateTime.of(year, month + 1, day, hour, minute, second).toInstant(ZoneOffset.UTC);
		}
		catch (DateTimeException ex) {
			// A day the month does not have (30 February).
			return null;
		}
	}

	private static boolean isDateChar(char c) {
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ':';
	}

	/**
	 * Returns hours, minutes and seconds of a token {@code 1*2DIGIT ":" 1*2DIGIT ":"
	 * 1*2DIGIT}, trailing characters allowed, or {@code null}.
	 */
	private static int @Nullable [] time(String token) {
		int[] parts = new int[3];
		int at = 0;
		for (int part = 0; part < 3; part++) {
			int start = at;
			while (at < token.length() && at - start < 3 && Character.isDigit(token.charAt(at))) {
				at++;
			}
			int digits = at - start;
			if (digits < 1 || digits > 2) {
				return null;
			}
			parts[part] = Integer.parseInt(token, start, at, 10);
			if (part < 2) {
				if (at >= token.length() || token.charAt(at) != ':') {
					return null;
				}
				at++;
			}
		}
		return parts;
	}

	private static int leadingDigits(String token) {
		int digits = 0;
		while (digits < token.length() && token.charAt(digits) >= '0' && token.charAt(digits) <= '9') {
			digits++;
		}
		// All the leading digits: a run longer than a field allows is not that field.
		return digits;
	}

	private static int monthOf(String token) {
		if (token.length() < 3) {
			return -1;
		}
		String first = token.substring(0, 3).toLowerCase(Locale.ROOT);
		for (int i = 0; i < MONTHS.length; i++) {
			if (MONTHS[i].equals(first)) {
				return i;
			}
		}
		return -1;
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
