package dev.gatewaylb.internal.request;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The spelling {@code client-ip | header:NAME | cookie:NAME}, read and written back.
 */
class HashKeyTests {

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = ';', quoteCharacter = '"', textBlock = """
			client-ip               ; CLIENT_IP ;
			header:X-User           ; HEADER    ; X-User
			cookie:SESSION          ; COOKIE    ; SESSION
			header:!#$%&'*+-.^_`|~9 ; HEADER    ; !#$%&'*+-.^_`|~9
			cookie:client-ip        ; COOKIE    ; client-ip
			""")
	void parsesEachSpellingAndWritesItBack(String text, HashKey.Source source, String name) {
		HashKey key = HashKey.parse("hash-key", text);
		assertThat(key).isEqualTo(new HashKey(source, (name != null) ? name : ""));
		assertThat(key).hasToString(text);
	}

	@ParameterizedTest(name = "''{0}''")
	@ValueSource(strings = { "", "ip", "client-IP", "client-ip ", "header:", "cookie:", "header", "Header:X-User",
			"header:X User", "header:X-User;", "cookie:a=b", "header:é", "query:id" })
	void rejectsAnythingElseNamingThePropertyAndTheValue(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> HashKey.parse("partition-by", text))
			.withMessage("partition-by: '" + text + "' (expected: client-ip, header:NAME or cookie:NAME)");
	}

	@ParameterizedTest(name = "{0} ''{1}''")
	@CsvSource(delimiter = '|', textBlock = """
			CLIENT_IP | X-User
			HEADER    | ''
			COOKIE    | a b
			""")
	void isAlwaysOneThatCanBeSpelled(HashKey.Source source, String name) {
		assertThatIllegalArgumentException().isThrownBy(() -> new HashKey(source, name));
	}

}
