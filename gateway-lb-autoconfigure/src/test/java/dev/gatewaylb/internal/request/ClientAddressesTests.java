package dev.gatewaylb.internal.request;

import dev.gatewaylb.request.Cidr;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class ClientAddressesTests {

	private static final List<Cidr> TRUSTED = List.of(Cidr.valueOf("10.0.0.0/8"), Cidr.valueOf("192.0.2.7"),
			Cidr.valueOf("2001:db8:ffff::/48"));

	@ParameterizedTest(name = "peer {0}, X-Forwarded-For [{1}] -> {2}")
	@CsvSource(delimiter = '|', nullValues = "NULL", textBlock = """
			203.0.113.9 | NULL                               | 203.0.113.9
			203.0.113.9 | 198.51.100.1                       | 203.0.113.9
			10.1.1.1    | 198.51.100.1                       | 198.51.100.1
			10.1.1.1    | 198.51.100.1, 10.2.2.2             | 198.51.100.1
			10.1.1.1    | 198.51.100.1, 192.0.2.7, 10.2.2.2  | 198.51.100.1
			10.1.1.1    | 6.6.6.6, 198.51.100.1, 10.2.2.2    | 198.51.100.1
			10.1.1.1    | not-an-ip, 10.2.2.2                | 10.2.2.2
			10.1.1.1    | ''                                 | 10.1.1.1
			10.1.1.1    | 10.3.3.3                           | 10.3.3.3
			10.1.1.1    | ' 2001:db8::1 '                    | 2001:db8:0:0:0:0:0:1
			""")
	void walksForwardedForFromTheRightThroughTrustedProxiesOnly(String peer, String forwardedFor, String client) {
		List<String> header = (forwardedFor != null) ? List.of(forwardedFor) : null;
		assertThat(ClientAddresses.resolve(new InetSocketAddress(peer, 40000), header, TRUSTED)).isEqualTo(client);
	}

	@ParameterizedTest(name = "X-Forwarded-For [{0}] -> {1}")
	@CsvSource(delimiter = '|', textBlock = """
			198.51.100.1:5678                       | 198.51.100.1
			[2001:db8::1]:443                       | 2001:db8:0:0:0:0:0:1
			[2001:db8::1]                           | 2001:db8:0:0:0:0:0:1
			2001:db8::1                             | 2001:db8:0:0:0:0:0:1
			2001:db8::1:443                         | 2001:db8:0:0:0:0:1:443
			[::ffff:198.51.100.1]:443               | 198.51.100.1
			198.51.100.1, 10.2.2.2:443              | 198.51.100.1
			198.51.100.1, [2001:db8:ffff::7]:443    | 198.51.100.1
			198.51.100.1, 2001:db8:ffff::7          | 198.51.100.1
			198.51.100.1, [::ffff:10.2.2.2]         | 198.51.100.1
			198.51.100.1,, 10.2.2.2 ,               | 198.51.100.1
			' ,  , '                                | 10.1.1.1
			198.51.100.1:0                          | 198.51.100.1
			198.51.100.1:65535                      | 198.51.100.1
			""")
	void readsAddressesWithAPortAndBracketedIpv6(String forwardedFor, String client) {
		assertThat(ClientAddresses.resolve(new InetSocketAddress("10.1.1.1", 1), List.of(forwardedFor), TRUSTED))
			.isEqualTo(client);
	}

	@ParameterizedTest(name = "X-Forwarded-For [{0}] -> {1}")
	@CsvSource(delimiter = '|', textBlock = """
			6.6.6.6, 198.51.100.1:65536, 10.2.2.2   | 10.2.2.2
			6.6.6.6, 198.51.100.1:, 10.2.2.2        | 10.2.2.2
			6.6.6.6, 198.51.100.1:x, 10.2.2.2       | 10.2.2.2
			6.6.6.6, 198.51.100.1:+80, 10.2.2.2     | 10.2.2.2
			6.6.6.6, 198.51.100.1:080080, 10.2.2.2  | 10.2.2.2
			6.6.6.6, [2001:db8::1]:x, 10.2.2.2      | 10.2.2.2
			6.6.6.6, [2001:db8::1]443, 10.2.2.2     | 10.2.2.2
			6.6.6.6, [2001:db8::1, 10.2.2.2         | 10.2.2.2
			6.6.6.6, 2001:db8::1]:443, 10.2.2.2     | 10.2.2.2
			6.6.6.6, [198.51.100.1]:80, 10.2.2.2    | 10.2.2.2
			6.6.6.6, [[2001:db8::1]], 10.2.2.2      | 10.2.2.2
			6.6.6.6, 999.1.1.1, 10.2.2.2            | 10.2.2.2
			6.6.6.6, 01.2.3.4, 10.2.2.2             | 10.2.2.2
			6.6.6.6, example.com, 10.2.2.2          | 10.2.2.2
			6.6.6.6, localhost:80, 10.2.2.2         | 10.2.2.2
			6.6.6.6, unknown, 10.2.2.2              | 10.2.2.2
			6.6.6.6, fe80::1%eth0, 10.2.2.2         | 10.2.2.2
			6.6.6.6, 198.51.100.1 10.3.3.3, 10.2.2.2 | 10.2.2.2
			""")
	void endsTheWalkAtTheLastTrustedHopOnAnEntryThatIsNoAddress(String forwardedFor, String client) {
		assertThat(ClientAddresses.resolve(new InetSocketAddress("10.1.1.1", 1), List.of(forwardedFor), TRUSTED))
			.isEqualTo(client);
	}

	@Test
	void readsSeveralHeaderLinesAsOneList() {
		assertThat(ClientAddresses.resolve(new InetSocketAddress("10.1.1.1", 1),
				Arrays.asList("198.51.100.1", "10.9.9.9"), TRUSTED))
			.isEqualTo("198.51.100.1");
		assertThat(ClientAddresses.resolve(new InetSocketAddress("10.1.1.1", 1),
				Arrays.asList("198.51.100.1", null, "10.9.9.9:80"), TRUSTED))
			.isEqualTo("198.51.100.1");
	}

	@Test
	void ignoresTheHeaderWithoutTrustedProxies() {
		assertThat(ClientAddresses.resolve(new InetSocketAddress("10.1.1.1", 1), List.of("198.51.100.1"), List.of()))
			.isEqualTo("10.1.1.1");
		assertThat(ClientAddresses.resolve(null, List.of("198.51.100.1"), TRUSTED)).isNull();
	}

}
