package dev.gatewaylb.internal.request;

import dev.gatewaylb.request.Cidr;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The numeric address parser behind {@code trusted-proxies} and {@code X-Forwarded-For}.
 * That it never asks a resolver is checked by {@code ArchitectureTests}: a host name here
 * gives {@code null} because the parser has no way to look one up.
 */
class CidrTests {

	@ParameterizedTest(name = "[{0}] -> {1}")
	@CsvSource(delimiter = '|', textBlock = """
			1.2.3.4                                 | 1.2.3.4
			0.0.0.0                                 | 0.0.0.0
			255.255.255.255                         | 255.255.255.255
			10.0.0.0                                | 10.0.0.0
			'  192.0.2.1\t'                         | 192.0.2.1
			::                                      | 0:0:0:0:0:0:0:0
			::1                                     | 0:0:0:0:0:0:0:1
			1::                                     | 1:0:0:0:0:0:0:0
			2001:db8::1                             | 2001:db8:0:0:0:0:0:1
			[2001:db8::1]                           | 2001:db8:0:0:0:0:0:1
			' [::1] '                               | 0:0:0:0:0:0:0:1
			2001:DB8:0:0:0:0:0:1                    | 2001:db8:0:0:0:0:0:1
			0001:0db8:0000::00ff                    | 1:db8:0:0:0:0:0:ff
			1:2:3:4:5:6:7:8                         | 1:2:3:4:5:6:7:8
			::2:3:4:5:6:7:8                         | 0:2:3:4:5:6:7:8
			1:2:3:4:5:6:7::                         | 1:2:3:4:5:6:7:0
			1:2::7:8                                | 1:2:0:0:0:0:7:8
			fe80::1                                 | fe80:0:0:0:0:0:0:1
			::ffff:1.2.3.4                          | 1.2.3.4
			[::ffff:192.0.2.1]                      | 192.0.2.1
			1:2:3:4:5:6:1.2.3.4                     | 1:2:3:4:5:6:102:304
			::1.2.3.4                               | 0:0:0:0:0:0:102:304
			64:ff9b::192.0.2.33                     | 64:ff9b:0:0:0:0:c000:221
			""")
	void parsesIpLiterals(String text, String address) {
		InetAddress parsed = Cidr.parseAddress(text);
		assertThat(parsed).isNotNull();
		assertThat(parsed.getHostAddress()).isEqualTo(address);
	}

	@ParameterizedTest(name = "[{0}]")
	@ValueSource(strings = { "", " ", "\t", "999.1.1.1", "256.0.0.1", "1.2.3.256", "1.2.3", "1.2", "1", "16909060",
			"01.2.3.4", "1.2.3.04", "1.02.3.4", "00.0.0.0", "0x1.2.3.4", "1.2.3.4.5", "1.2.3.4.", ".1.2.3.4", "1..2.3",
			"+1.2.3.4", "1.2.3.-4", "1.2.3.4 5", "1 .2.3.4", "1.2.3.4/8", "1.2.3.4:80", "1111.2.3.4", "1e1.1.1.1",
			"\u0661.\u0662.\u0663.\u0664", "localhost", "example.com", "proxy.local", "unknown", "_hidden",
			"1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1::2::3", "::1::", ":::",
			":", ":1", "1:", "1:::2", "12345::1", "g::1", "2001:db8:: 1", "fe80::1%eth0", "fe80::1%1",
			"[fe80::1%25eth0]", "[1.2.3.4]", "[::1", "::1]", "[[::1]]", "[]", "[::1]:443", "::ffff:1.2.3",
			"::ffff:1.2.3.256", "::ffff:01.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "1.2.3.4::", "::1.2.3.4:1", "::1.2.3.4.5",
			"1:2:3:4:5:6:7:8:1.2.3.4", "\uff11.2.3.4", "\uff41::1" })
	void rejectsEverythingElseWithoutThrowing(String text) {
		assertThat(Cidr.parseAddress(text)).isNull();
	}

	@Test
	void readsARangeOfALongerTextAndRejectsBoundsOutsideIt() {
		String text = "for=[2001:db8::1]:443;by=192.0.2.1";
		assertThat(Cidr.parseAddress(text, 4, 17)).isEqualTo(Cidr.parseAddress("2001:db8::1"));
		int by = text.indexOf("192");
		assertThat(Cidr.parseAddress(text, by, text.length())).isEqualTo(Cidr.parseAddress("192.0.2.1"));
		assertThat(Cidr.parseAddress(text, 4, 16)).isNull();
		assertThat(Cidr.parseAddress(text, -1, 3)).isNull();
		assertThat(Cidr.parseAddress(text, 5, 4)).isNull();
		assertThat(Cidr.parseAddress(text, by, text.length() + 1)).isNull();
	}

	@Test
	void readsEveryTextFormOfRandomAddresses() {
		// RFC 4291 allows each of these spellings of one address: hex digits in either
		// case with or without leading zeros, "::" over any run of zero groups, the last
		// 32 bits as IPv4, brackets around it all.
		SplittableRandom random = new SplittableRandom(4291);
		for (int i = 0; i < 20_000; i++) {
			byte[] bytes = new byte[16];
			for (int b = 0; b < 16; b++) {
				// Mostly zero bytes, so that "::" has runs to stand for.
				bytes[b] = (random.nextInt(3) == 0) ? (byte) random.nextInt(256) : 0;
			}
			String text = ipv6Text(bytes, random);
			InetAddress parsed = Cidr.parseAddress(text);
			assertThat(parsed).as(text).isNotNull();
			byte[] expected = isIpv4Mapped(bytes) ? Arrays.copyOfRange(bytes, 12, 16) : bytes;
			assertThat(parsed.getAddress()).as(text).containsExactly(expected);

			byte[] ipv4 = Arrays.copyOf(bytes, 4);
			random.nextBytes(ipv4);
			String dotted = (ipv4[0] & 0xff) + "." + (ipv4[1] & 0xff) + "." + (ipv4[2] & 0xff) + "." + (ipv4[3] & 0xff);
			assertThat(Cidr.parseAddress(dotted)).as(dotted).isInstanceOf(Inet4Address.class);
			assertThat(Cidr.parseAddress(dotted).getAddress()).as(dotted).containsExactly(ipv4);
		}
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			10.0.0.0/8          | 10.0.0.0/8
			10.1.2.3/8          | 10.0.0.0/8
			192.0.2.7           | 192.0.2.7/32
			' 10.0.0.0/8 '      | 10.0.0.0/8
			0.0.0.0/0           | 0.0.0.0/0
			fd00::/8            | fd00:0:0:0:0:0:0:0/8
			[2001:db8::1]/32    | 2001:db8:0:0:0:0:0:0/32
			::1                 | 0:0:0:0:0:0:0:1/128
			""")
	void bindsANetworkOrABareAddress(String text, String network) {
		assertThat(Cidr.valueOf(text)).hasToString(network);
	}

	@ParameterizedTest(name = "[{0}]")
	@CsvSource(delimiter = '|', textBlock = """
			10.0.0/8        | expected: an IP address or a CIDR such as 10.0.0.0/8
			999.1.1.1       | expected: an IP address or a CIDR such as 10.0.0.0/8
			proxy.local     | expected: an IP address or a CIDR such as 10.0.0.0/8
			localhost/8     | expected: an IP address or a CIDR such as 10.0.0.0/8
			''              | expected: an IP address or a CIDR such as 10.0.0.0/8
			10.0.0.0/33     | expected: a prefix length of 0 to 32
			10.0.0.0/+8     | expected: a prefix length of 0 to 32
			10.0.0.0/-0     | expected: a prefix length of 0 to 32
			10.0.0.0/       | expected: a prefix length of 0 to 32
			10.0.0.0/8/8    | expected: a prefix length of 0 to 32
			fd00::/129      | expected: a prefix length of 0 to 128
			fd00::/0128     | expected: a prefix length of 0 to 128
			""")
	void rejectsAnInvalidNetworkNamingTheValue(String text, String expectation) {
		assertThatIllegalArgumentException().isThrownBy(() -> Cidr.valueOf(text))
			.withMessage("'" + text + "' (" + expectation + ")");
	}

	@Test
	void matchesAddressesOfItsOwnFamilyOnly() {
		Cidr network = Cidr.valueOf("10.0.0.0/8");
		assertThat(network.contains(Cidr.parseAddress("10.255.0.1"))).isTrue();
		assertThat(network.contains(Cidr.parseAddress("11.0.0.1"))).isFalse();
		assertThat(network.contains(Cidr.parseAddress("::ffff:10.0.0.1"))).isTrue();
		assertThat(network.contains(Cidr.parseAddress("::a00:1"))).isFalse();
	}

	private static boolean isIpv4Mapped(byte[] bytes) {
		for (int i = 0; i < 10; i++) {
			if (bytes[i] != 0) {
				return false;
			}
		}
		return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
	}

	/**
	 * Spells {@code bytes} in one of RFC 4291's text forms, chosen at random.
	 */
	private static String ipv6Text(byte[] bytes, SplittableRandom random) {
		boolean ipv4Tail = random.nextBoolean();
		int groups = ipv4Tail ? 6 : 8;
		String[] parts = new String[groups];
		for (int g = 0; g < groups; g++) {
			int value = ((bytes[2 * g] & 0xff) << 8) | (bytes[2 * g + 1] & 0xff);
			String hex = Integer.toHexString(value);
			hex = "0".repeat(random.nextInt(5 - hex.length())) + hex;
			parts[g] = random.nextBoolean() ? hex.toUpperCase(Locale.ROOT) : hex;
		}
		// "::" over one run of zero groups, picked at random among the runs, or none.
		int gapStart = -1;
		int gapEnd = -1;
		if (random.nextBoolean()) {
			int runs = 0;
			for (int g = 0; g < groups; g++) {
				if (bytes[2 * g] == 0 && bytes[2 * g + 1] == 0
						&& (g == 0 || bytes[2 * g - 2] != 0 || bytes[2 * g - 1] != 0) && random.nextInt(++runs) == 0) {
					gapStart = g;
				}
			}
			if (gapStart >= 0) {
				gapEnd = gapStart + 1;
				while (gapEnd < groups && bytes[2 * gapEnd] == 0 && bytes[2 * gapEnd + 1] == 0) {
					gapEnd++;
				}
				// Shorter runs are valid as well: "::" may stand for part of a run.
				gapEnd = gapStart + 1 + random.nextInt(gapEnd - gapStart);
			}
		}
		StringBuilder text = new StringBuilder();
		for (int g = 0; g < groups; g++) {
			if (g == gapStart) {
				text.append("::");
				g = gapEnd - 1;
				continue;
			}
			if (text.length() > 0 && !(text.length() >= 2 && text.substring(text.length() - 2).equals("::"))) {
				text.append(':');
			}
			text.append(parts[g]);
		}
		if (ipv4Tail) {
			if (text.length() > 0 && !text.toString().endsWith("::")) {
				text.append(':');
			}
			text.append(bytes[12] & 0xff)
				.append('.')
				.append(bytes[13] & 0xff)
				.append('.')
				.append(bytes[14] & 0xff)
				.append('.')
				.append(bytes[15] & 0xff);
		}
		return random.nextBoolean() ? "[" + text + "]" : text.toString();
	}

}
