package dev.gatewaylb.internal.split;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class StickyCookieTests {

	@Test
	void mintsHexMillisThenHexCounter() {
		StickyCookie cookie = new StickyCookie(() -> 0x19ad2f36c1eL, 42);
		assertThat(cookie.mint()).isEqualTo("019ad2f36c1e00000000002a");
		assertThat(cookie.mint()).isEqualTo("019ad2f36c1e00000000002b");
	}

	@Test
	void mintsDistinctValidValues() {
		AtomicLong clock = new AtomicLong(1_764_000_000_000L);
		StickyCookie cookie = new StickyCookie(clock::get, Long.MAX_VALUE - 5);
		Set<String> values = new HashSet<>();
		for (int i = 0; i < 100_000; i++) {
			String value = cookie.mint();
			assertThat(StickyCookie.isValid(value)).as(value).isTrue();
			values.add(value);
		}
		assertThat(values).hasSize(100_000);
	}

	@ParameterizedTest
	@NullAndEmptySource
	@ValueSource(strings = { "019AD2F36C1E00000000002A", "019ad2f36c1e00000000002", "019ad2f36c1e00000000002a0",
			"019ad2f36c1e0000000000-a", "019ad2f36c1e00000000002g", " 019ad2f36c1e0000000002a" })
	void rejectsValuesThatAreNot24LowercaseHexDigits(String value) {
		assertThat(StickyCookie.isValid(value)).isFalse();
	}

}
