package dev.gatewaylb.internal.affinity.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EndpointCookieTests {

	static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);

	static final byte[] OLD_SECRET = "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.UTF_8);

	static final String ALPHABET = "0123456789abcdefABCDEFGHIJKLMNOPQRSTUVWXYZghijklmnopqrstuvwxyz-_";

	final EndpointCookie cookie = new EndpointCookie("orders", SECRET, List.of());

	@Test
	void aSignedValueIsAcceptedByAnyReplicaWithTheSecretAndCarriesTheEndpoint() {
		long id = EndpointCookie.endpointId("10.0.0.7:8080");
		String value = this.cookie.sign(id);
		assertThat(value).hasSize(EndpointCookie.LENGTH).matches("[0-9a-f]{16}[A-Za-z0-9_-]{22}");
		assertThat(value).as("the endpoint is not named in clear").doesNotContain("10.0.0.7").doesNotContain("8080");
		EndpointCookie anotherReplica = new EndpointCookie("orders", SECRET.clone(), List.of());
		assertThat(anotherReplica.check(value)).isZero();
		assertThat(EndpointCookie.endpointIdOf(value)).isEqualTo(id);
		assertThat(EndpointCookie.endpointId("10.0.0.7:8080")).as("stable").isEqualTo(id);
		assertThat(EndpointCookie.endpointId("10.0.0.7:8081")).isNotEqualTo(id);
	}

	@Test
	void aValueOfAnotherServiceOrAnotherSecretIsRejected() {
		String value = this.cookie.sign(42);
		assertThat(new EndpointCookie("payments", SECRET, List.of()).check(value)).isEqualTo(EndpointCookie.REJECTED);
		assertThat(new EndpointCookie("orders", OLD_SECRET, List.of()).check(value)).isEqualTo(EndpointCookie.REJECTED);
	}

	@Test
	void aValueSignedWithAPreviousSecretIsAcceptedAndSaysWhichOne() {
		String old = new EndpointCookie("orders", OLD_SECRET, List.of()).sign(42);
		EndpointCookie rotated = new EndpointCookie("orders", SECRET, List.of(OLD_SECRET));
		assertThat(rotated.check(old)).as("the first previous secret").isEqualTo(1);
		assertThat(rotated.check(rotated.sign(42))).as("new values are signed with the new secret").isZero();
		assertThat(this.cookie.check(old)).as("once the old secret is dropped").isEqualTo(EndpointCookie.REJECTED);
	}

	@Test
	void everyOneCharacterChangeIsRejected() {
		String value = this.cookie.sign(EndpointCookie.endpointId("10.0.0.7:8080"));
		int changes = 0;
		for (int i = 0; i < value.length(); i++) {
			for (char c : ALPHABET.toCharArray()) {
				if (c == value.charAt(i)) {
					continue;
				}
				String changed = value.substring(0, i) + c + value.substring(i + 1);
				assertThat(this.cookie.check(changed)).as("%s", changed).isEqualTo(EndpointCookie.REJECTED);
				changes++;
			}
		}
		assertThat(changes).isEqualTo(38 * 63);
	}

	@Test
	void malformedValuesAreRejectedNeverThrown() {
		String value = this.cookie.sign(7);
		for (String malformed : List.of("", "x", value.substring(1), value + "A", value.toUpperCase(),
				value.substring(0, 37) + "=", value.substring(0, 16) + "é".repeat(22), " ".repeat(38),
				value.substring(0, 37) + '\u0000')) {
			assertThat(this.cookie.check(malformed)).as("%s", malformed).isEqualTo(EndpointCookie.REJECTED);
		}
		SplittableRandom random = new SplittableRandom(24);
		for (int n = 0; n < 20_000; n++) {
			StringBuilder text = new StringBuilder();
			int length = (n % 2 == 0) ? EndpointCookie.LENGTH : random.nextInt(80);
			for (int i = 0; i < length; i++) {
				text.append((n % 4 == 0) ? (char) random.nextInt(0x3000) : ALPHABET.charAt(random.nextInt(64)));
			}
			assertThat(this.cookie.check(text)).as("%s", text).isEqualTo(EndpointCookie.REJECTED);
		}
	}

	@Test
	void theLastCharacterHasOneSpelling() {
		String value = this.cookie.sign(7);
		// The last character carries 2 bits and 4 zero bits: of the 64 characters, 4
		// spell the same 2 bits with zeros, and only the one signed is accepted.
		long accepted = ALPHABET.chars()
			.filter((c) -> this.cookie.check(value.substring(0, 37) + (char) c) != EndpointCookie.REJECTED)
			.count();
		assertThat(accepted).isEqualTo(1);
	}

	@Test
	void threadsCheckAtOnce() {
		String[] values = IntStream.range(0, 64).mapToObj((i) -> this.cookie.sign(i)).toArray(String[]::new);
		long accepted = IntStream.range(0, 200_000)
			.parallel()
			.filter((i) -> this.cookie.check(values[i % 64]) == 0
					&& EndpointCookie.endpointIdOf(values[i % 64]) == i % 64)
			.count();
		assertThat(accepted).isEqualTo(200_000);
	}

	@Test
	void aValueIsCheckedWhereItLiesInACookieLine() {
		String value = this.cookie.sign(42);
		String line = "theme=dark; GWLB_EP=" + value + "; JSESSIONID=1";
		int start = line.indexOf(value);
		assertThat(this.cookie.check(line, start, start + EndpointCookie.LENGTH)).isZero();
		assertThat(EndpointCookie.endpointIdOf(line, start)).isEqualTo(42);
		assertThat(this.cookie.check(line, start, start + EndpointCookie.LENGTH - 1))
			.isEqualTo(EndpointCookie.REJECTED);
		assertThat(this.cookie.check(line, start + 1, start + EndpointCookie.LENGTH + 1))
			.isEqualTo(EndpointCookie.REJECTED);
	}

	@Test
	void aShortSecretIsRefusedNamingIt() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new EndpointCookie("orders", "short".getBytes(StandardCharsets.UTF_8), List.of()))
			.withMessage("secret: 5 bytes (expected: at least 32)");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new EndpointCookie("orders", SECRET, List.of(new byte[31])))
			.withMessage("previous secret: 31 bytes (expected: at least 32)");
	}

}
