package dev.gatewaylb.internal.request;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class TokensTests {

	@Test
	void acceptsLettersDigitsAndTheDelimiterFreeSymbols() {
		assertThat(Tokens.isToken("azAZ09!#$%&'*+-.^_`|~")).isTrue();
	}

	@Test
	void rejectsEmptyText() {
		assertThat(Tokens.isToken("")).isFalse();
	}

	@ParameterizedTest(name = "''{0}''")
	@ValueSource(strings = { " ", "a b", "a\tb", "\"", "(", ")", ",", "/", ":", ";", "<", "=", ">", "?", "@", "[", "\\",
			"]", "{", "}", "\u007f", "\u00e9", "\u0000" })
	void rejectsSeparatorsControlsAndNonAsciiAnywhere(String text) {
		assertThat(Tokens.isToken(text)).isFalse();
		assertThat(Tokens.isToken("a" + text + "b")).isFalse();
	}

}
