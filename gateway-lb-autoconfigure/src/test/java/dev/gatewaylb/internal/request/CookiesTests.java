package dev.gatewaylb.internal.request;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

class CookiesTests {

	@ParameterizedTest(name = "[{0}] -> {1}")
	@CsvSource(delimiter = '|', nullValues = "NULL", textBlock = """
			GWLB=abc                          | abc
			a=1; GWLB=abc; b=2                | abc
			a=1;GWLB=abc;b=2                  | abc
			'  GWLB  =  abc  ; x=y'           | abc
			GWLB="abc"                        | abc
			GWLB="                            | "
			GWLB=first; GWLB=second           | first
			GWLB=                             | ''
			GWLB                              | NULL
			GWLBX=abc; XGWLB=abc              | NULL
			noequals; GWLB=abc                | abc
			;;;=;GWLB=abc;;                   | abc
			a=b=c; GWLB=x=y                   | x=y
			GWLB;a=1                          | NULL
			GWLB; GWLB=2                      | 2
			'GWLB	=	"q"	'                  | q
			gwlb=abc                          | NULL
			''                                | NULL
			""")
	void readsTheFirstCookieOfTheName(String line, String expected) {
		assertThat(Cookies.first(line, "GWLB")).isEqualTo(expected);
	}

	@Test
	void takesTheFirstMatchAcrossHeaderLines() {
		assertThat(Cookies.first(List.of("a=1", "GWLB=one", "GWLB=two"), "GWLB")).isEqualTo("one");
		assertThat(Cookies.first(Arrays.asList(null, "GWLB=one"), "GWLB")).isEqualTo("one");
		assertThat(Cookies.first((List<String>) null, "GWLB")).isNull();
	}

	@Test
	void findsACookieAfterEightKilobytesOfOthers() {
		StringBuilder line = new StringBuilder();
		for (int i = 0; line.length() < 8 * 1024; i++) {
			line.append("c").append(i).append("=").append("v".repeat(40)).append("; ");
		}
		line.append("GWLB=found");
		assertThat(Cookies.first(line.toString(), "GWLB")).isEqualTo("found");
	}

	@Test
	void neverThrowsOnArbitraryBytes() {
		SplittableRandom random = new SplittableRandom(3);
		for (int i = 0; i < 20_000; i++) {
			byte[] bytes = new byte[random.nextInt(300)];
			for (int j = 0; j < bytes.length; j++) {
				// Bias towards the characters the parser cares about.
				bytes[j] = switch (random.nextInt(8)) {
					case 0 -> (byte) ';';
					case 1 -> (byte) '=';
					case 2 -> (byte) '"';
					case 3 -> (byte) ' ';
					default -> (byte) random.nextInt(256);
				};
			}
			String line = new String(bytes, (i % 2 == 0) ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
			assertThatNoException().isThrownBy(() -> Cookies.first(List.of(line, "GWLB=ok"), "GWLB"));
		}
		assertThat(Cookies.first("GWLB=h\u00e9llo\u00ff", "GWLB")).isEqualTo("h\u00e9llo\u00ff");
	}

	@Test
	void boundsPointAtTheValueFirstReturns() {
		for (String line : List.of("a=1; GWLB=v; b=2", "GWLB=\"v\"", " GWLB = v ;", "GWLB=", "x=GWLB=v; GWLB=v")) {
			long bounds = Cookies.bounds(line, "GWLB");
			assertThat(line.substring(Cookies.start(bounds), Cookies.end(bounds))).as(line)
				.isEqualTo(Cookies.first(line, "GWLB"));
		}
		assertThat(Cookies.bounds("a=1; GWLBX=v; GWLB", "GWLB")).isEqualTo(Cookies.ABSENT);
	}

}
