package dev.gatewaylb.internal.request;

import org.jspecify.annotations.Nullable;

/**
 * Text from outside (a registry, the fleet's bus) made safe for a log line: quoted,
 * control characters escaped (a line break in an instance id must not forge a log line),
 * and cut at {@value #MAX_LENGTH} characters.
 */
public final class Logged {

	/**
	 * The most characters of a text a log line shows.
	 */
	public static final int MAX_LENGTH = 200;

	private Logged() {
	}

	/**
	 * Returns the text as a log line may show it.
	 * @param value the text, or {@code null}
	 * @return it quoted, escaped and cut; {@code null} unquoted
	 */
	public static String text(@Nullable String value) {
		if (value == null) {
			return "null";
		}
		StringBuilder text = new StringBuilder(Math.min(value.length(), MAX_LENGTH) + 2).append('\'');
		for (int i = 0; i < value.length() && i < MAX_LENGTH; i++) {
			char c = value.charAt(i);
			if (isControl(c)) {
				text.append(String.format("\\u%04x", (int) c));
			}
			else {
				text.append(c);
			}
		}
		if (value.length() > MAX_LENGTH) {
			text.append("...");
		}
		return text.append('\'').toString();
	}

	/**
	 * Returns whether a character would break or forge a log line: a C0 or C1 control
	 * character, DEL, or a Unicode line or paragraph separator.
	 * @param c the character
	 * @return whether it is escaped in a log line
	 */
	public static boolean isControl(char c) {
		return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029';
	}

}
