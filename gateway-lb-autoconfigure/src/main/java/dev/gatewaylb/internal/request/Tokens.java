package dev.gatewaylb.internal.request;

/**
 * The RFC 9110 token: what a header or cookie name may contain.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc9110#section-5.6.2">RFC 9110, section
 * 5.6.2</a>
 */
public final class Tokens {

	private static final String DELIMITER_FREE = "!#$%&'*+-.^_`|~";

	private Tokens() {
	}

	/**
	 * Returns whether {@code text} is a token: one or more ASCII letters, digits and
	 * {@code !#$%&'*+-.^_`|~}.
	 * @param text the text
	 * @return whether it is a token
	 */
	public static boolean isToken(CharSequence text) {
		if (text.isEmpty()) {
			return false;
		}
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			boolean alphanumeric = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
			if (!alphanumeric && DELIMITER_FREE.indexOf(c) < 0) {
				return false;
			}
		}
		return true;
	}

}
