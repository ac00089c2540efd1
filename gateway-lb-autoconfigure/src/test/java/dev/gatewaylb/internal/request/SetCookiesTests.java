package dev.gatewaylb.internal.request;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;

import dev.gatewaylb.internal.request.SetCookies.Change;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SetCookiesTests {

	private static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");

	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = '|', textBlock = """
			JSESSIONID=abc; Path=/; HttpOnly                                   | SET
			JSESSIONID=abc                                                     | SET
			 JSESSIONID = abc ;Max-Age=3600                                    | SET
			JSESSIONID=; Max-Age=0; Path=/                                     | EXPIRED
			JSESSIONID=x; max-age=-1                                           | EXPIRED
			JSESSIONID=x; Max-Age=00                                           | EXPIRED
			JSESSIONID=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT                | EXPIRED
			JSESSIONID=x; Expires=Sat, 05 Dec 2026 12:00:00 GMT                | EXPIRED
			JSESSIONID=x; Expires=Sun, 06 Dec 2026 12:00:00 GMT                | SET
			JSESSIONID=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60    | SET
			JSESSIONID=x; Max-Age=0; Expires=Sun, 06 Dec 2026 12:00:00 GMT     | EXPIRED
			JSESSIONID=x; Expires=not a date                                   | SET
			JSESSIONID=x; Expires=Thu, 01-Jan-1970 00:00:10 GMT                | EXPIRED
			JSESSIONID=x; Expires=Mon, 01 Jan 1970 00:00:00 GMT                | EXPIRED
			JSESSIONID=x; expires=Sunday, 06-Dec-26 12:00:00 GMT               | SET
			JSESSIONID=x; Expires=Wed Dec 2 10:00:00 2026                      | EXPIRED
			JSESSIONID=x; Expires=Thu, 30 Feb 1970 00:00:00 GMT                | SET
			JSESSIONID=x; Expires=Thu, 01 Jan 1970 25:00:00 GMT                | SET
			JSESSIONID=x; Max-Age=soon                                         | SET
			JSESSIONID=x; Max-Age=                                             | SET
			JSESSIONID=x; Max-Age=-                                            | SET
			JSESSIONIDX=x; Max-Age=0                                           | NONE
			XJSESSIONID=x                                                      | NONE
			other=JSESSIONID=x                                                 | NONE
			JSESSIONID                                                         | NONE
			;JSESSIONID=x                                                      | NONE
			""")
	void readsWhatOneLineDoesToTheCookie(String line, Change change) {
		assertThat(SetCookies.of(List.of(line), "JSESSIONID", NOW)).isEqualTo(change);
	}

	@Test
	void theLastLineThatNamesTheCookieDecides() {
		assertThat(SetCookies.of(List.of("JSESSIONID=a", "other=1", "JSESSIONID=; Max-Age=0"), "JSESSIONID", NOW))
			.isEqualTo(Change.EXPIRED);
		assertThat(SetCookies.of(List.of("JSESSIONID=; Max-Age=0", "JSESSIONID=b"), "JSESSIONID", NOW))
			.isEqualTo(Change.SET);
		assertThat(SetCookies.of(null, "JSESSIONID", NOW)).isEqualTo(Change.NONE);
		assertThat(SetCookies.of(List.of(), "JSESSIONID", NOW)).isEqualTo(Change.NONE);
	}

	@Test
	void aHostileLineIsReadInTimeLinearInItsLength() {
		char[] semicolons = new char[200_000];
		Arrays.fill(semicolons, ';');
		char[] equals = new char[200_000];
		Arrays.fill(equals, '=');
		String attributes = "JSESSIONID=x" + new String(semicolons);
		assertThat(SetCookies.of(List.of(attributes), "JSESSIONID", NOW)).isEqualTo(Change.SET);
		assertThat(SetCookies.of(List.of(new String(equals)), "JSESSIONID", NOW)).isEqualTo(Change.NONE);
		assertThat(SetCookies.of(List.of("JSESSIONID=x; " + new String(equals)), "JSESSIONID", NOW))
			.isEqualTo(Change.SET);
	}

}
