package dev.gatewaylb.internal.affinity.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EndpointCookieTests {

	static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);

	static final byte[] OLD_SECRET = "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.UTF_8);

	static final String ALPHABET = "0123456789abcdefABCDEFGHIJKLMNOPQRSTUVWXYZghijklmnopqrstuvwxyz-_";

	static final long DAY = 86_400;

	/**
	 * The wall clock of every replica here, in seconds.
	 */
	final AtomicLong now = new AtomicLong(1_800_000_000L);

	final EndpointCookie cookie = cookie("orders", SECRET, List.of());

	EndpointCookie cookie(String service, byte[] secret, List<byte[]> previous) {
		return new EndpointCookie(service, secret, previous, DAY, this.now::get);
	}

	@Test
	void aSignedValueIsAcceptedByAnyReplicaWithTheSecretAndCarriesTheEndpoint() {
		long id = EndpointCookie.endpointId("10.0.0.7:8080");
		String value = this.cookie.sign(id);
		assertThat(value).hasSize(EndpointCookie.LENGTH).matches("[A-Za-z0-9_-]{44}");
		EndpointCookie anotherReplica = cookie("orders", SECRET.clone(), List.of());
		assertThat(anotherReplica.check(value)).isZero();
		assertThat(anotherReplica.checkedEndpointId()).isEqualTo(id);
		assertThat(EndpointCookie.endpointId("10.0.0.7:8080")).as("stable").isEqualTo(id);
		assertThat(EndpointCookie.endpointId("10.0.0.7:8081")).isNotEqualTo(id);
	}

	@Test
	void theEndpointIdIsNotInTheValueInAnyFormAnAttackerCouldMatch() {
		long id = EndpointCookie.endpointId("10.0.0.7:8080");
		String value = this.cookie.sign(id);
		String hex = String.format("%016x", id);
		assertThat(value).doesNotContain("10.0.0.7").doesNotContain("8080").doesNotContain(hex);
		byte[] decoded = java.util.Base64.getUrlDecoder().decode(value.substring(0, 22));
		assertThat(java.nio.ByteBuffer.wrap(decoded).getLong()).as("the first eight bytes").isNotEqualTo(id);
		// Two values for one endpoint a second apart share nothing: a block cipher, not a
		// pad.
		this.now.incrementAndGet();
		String later = this.cookie.sign(id);
		assertThat(later.substring(0, 11)).isNotEqualTo(value.substring(0, 11));
	}

	@Test
	void aValueIsFollowedForItsLifetimeAndNotASecondLonger() {
		String value = this.cookie.sign(42);
		this.now.addAndGet(DAY);
		assertThat(this.cookie.check(value)).as("a day later").isZero();
		assertThat(this.cookie.checkedAgeSeconds()).isEqualTo(DAY);
		this.now.incrementAndGet();
		assertThat(this.cookie.check(value)).as("a day and a second later").isEqualTo(EndpointCookie.EXPIRED);
		this.now.set(1_800_000_000L - EndpointCookie.MAX_CLOCK_SKEW_SECONDS - 1);
		assertThat(this.cookie.check(value)).as("issued further ahead than clocks differ")
			.isEqualTo(EndpointCookie.EXPIRED);
		this.now.set(1_800_000_000L - 10);
		assertThat(this.cookie.check(value)).as("a replica whose clock is 10 s behind").isZero();
		assertThat(this.cookie.checkedAgeSeconds()).isZero();
	}

	@Test
	void aValueOfAnotherServiceOrAnotherSecretIsRejected() {
		String value = this.cookie.sign(42);
		assertThat(cookie("payments", SECRET, List.of()).check(value)).isEqualTo(EndpointCookie.REJECTED);
		assertThat(cookie("orders", OLD_SECRET, List.of()).check(value)).isEqualTo(EndpointCookie.REJECTED);
	}

	@Test
	void aValueSignedWithAPreviousSecretIsAcceptedAndSaysWhichOne() {
		String old = cookie("orders", OLD_SECRET, List.of()).sign(42);
		EndpointCookie rotated = cookie("orders", SECRET, List.of(OLD_SECRET));
		assertThat(rotated.check(old)).as("the first previous secret").isEqualTo(1);
		assertThat(rotated.checkedEndpointId()).isEqualTo(42);
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
		assertThat(changes).isEqualTo(44 * 63);
	}

	@Test
	void malformedValuesAreRejectedNeverThrown() {
		String value = this.cookie.sign(7);
		for (String malformed : List.of("", "x", value.substring(1), value + "A", value.toUpperCase(),
				value.substring(0, 43) + "=", value.substring(0, 22) + "é".repeat(22), " ".repeat(44),
				value.substring(0, 43) + '\u0000')) {
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
	void theLastCharacterOfEachHalfHasOneSpelling() {
		String value = this.cookie.sign(7);
		// The last character of each half carries 2 bits and 4 zero bits: of the 64
		// characters, 4 spell the same 2 bits with zeros, and only the one signed is
		// accepted.
		for (int last : new int[] { 21, 43 }) {
			long accepted = ALPHABET.chars()
				.filter((c) -> this.cookie.check(value.substring(0, last) + (char) c + value.substring(last + 1)) >= 0)
				.count();
			assertThat(accepted).as("character %d", last).isEqualTo(1);
		}
	}

	@Test
	void threadsCheckAtOnce() {
		String[] values = IntStream.range(0, 64).mapToObj((i) -> this.cookie.sign(i)).toArray(String[]::new);
		long accepted = IntStream.range(0, 200_000)
			.parallel()
			.filter((i) -> this.cookie.check(values[i % 64]) == 0 && this.cookie.checkedEndpointId() == i % 64)
			.count();
		assertThat(accepted).isEqualTo(200_000);
	}

	@Test
	void aValueIsCheckedWhereItLiesInACookieLine() {
		String value = this.cookie.sign(42);
		String line = "theme=dark; GWLB_EP=" + value + "; JSESSIONID=1";
		int start = line.indexOf(value);
		assertThat(this.cookie.check(line, start, start + EndpointCookie.LENGTH)).isZero();
		assertThat(this.cookie.checkedEndpointId()).isEqualTo(42);
		assertThat(this.cookie.check(line, start, start + EndpointCookie.LENGTH - 1))
			.isEqualTo(EndpointCookie.REJECTED);
		assertThat(this.cookie.check(line, start + 1, start + EndpointCookie.LENGTH + 1))
			.isEqualTo(EndpointCookie.REJECTED);
	}

	@Test
	void aShortSecretIsRefusedNamingIt() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> cookie("orders", "short".getBytes(StandardCharsets.UTF_8), List.of()))
			.withMessage("secret: 5 bytes (expected: at least 32)");
		assertThatIllegalArgumentException().isThrownBy(() -> cookie("orders", SECRET, List.of(new byte[31])))
			.withMessage("previous secret: 31 bytes (expected: at least 32)");
	}

}
