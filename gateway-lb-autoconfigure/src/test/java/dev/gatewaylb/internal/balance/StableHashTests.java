package dev.gatewaylb.internal.balance;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class StableHashTests {

	@ParameterizedTest(name = "fnv1a64(\"{0}\") = {1}")
	@CsvSource({ "'', cbf29ce484222325", "a, af63dc4c8601ec8c", "foobar, 85944171f73967e8" })
	void implementsFnv1a64(String text, String hex) {
		assertThat(StableHash.fnv1a(StableHash.FNV_OFFSET_BASIS, text)).isEqualTo(Long.parseUnsignedLong(hex, 16));
	}

	@Test
	void finishesWithMurmur3Fmix64() {
		assertThat(StableHash.fmix64(0)).isZero();
		assertThat(StableHash.hash("a")).isEqualTo(StableHash.fmix64(0xaf63dc4c8601ec8cL));
	}

	@Test
	void hashesTextAsItsUtf8Bytes() {
		SplittableRandom random = new SplittableRandom(1);
		for (int i = 0; i < 10_000; i++) {
			StringBuilder text = new StringBuilder();
			for (int j = random.nextInt(12); j > 0; j--) {
				text.appendCodePoint(
						random.nextInt(4) == 0 ? random.nextInt(0x10000, 0x10ffff) : random.nextInt(0, 0x3000));
			}
			String s = text.toString();
			assertThat(StableHash.hash(s)).as(s).isEqualTo(StableHash.hash(s.getBytes(StandardCharsets.UTF_8)));
		}
		String unpaired = "a\ud800b";
		assertThat(StableHash.hash(unpaired)).isEqualTo(StableHash.hash(unpaired.getBytes(StandardCharsets.UTF_8)));
	}

	@Test
	void hashesDecimalSuffixesLikeTheirText() {
		long prefix = StableHash.fnv1a(StableHash.FNV_OFFSET_BASIS, "10.0.0.1:8080#");
		for (int v : new int[] { 0, 7, 10, 159, 1234567 }) {
			assertThat(StableHash.fmix64(StableHash.fnv1aDecimal(prefix, v)))
				.isEqualTo(StableHash.hash("10.0.0.1:8080#" + v));
		}
	}

}
