package dev.gatewaylb.internal.discovery;

import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.cloud.client.DefaultServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

class DiscoveryRejectionTests {

	@ParameterizedTest
	@ValueSource(strings = { "10.0.0.1", "255.255.255.255", "localhost", "catalog-1.prod.svc.cluster.local",
			"catalog-1.prod.svc.cluster.local.", "a", "xn--bcher-kva.example", "::1", "[::1]", "fe80::1%eth0",
			"2001:db8::8a2e:370:7334", "2001:0db8:0000:0000:0000:ff00:0042:8329", "::ffff:192.0.2.1", "1::", "::" })
	void acceptsIpLiteralsAndHostNames(String host) {
		assertThat(DiscoveryRejection.of(instance(host, 8080))).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "bad host", "evil.com/x#", "evil.com?x", "user@host", "host:80", "-leading.example",
			"trailing-.example", "two..dots", "300.1.1.1", "1.2.3", "1.2.3.4.5", "a_b.example", "1:2:3", "1::2::3",
			"12345::1", "::1%", ":1::2", "1::2:", "[::1", "caf\u00e9.example", "line\nbreak" })
	void rejectsAnythingElseAsAnInvalidHost(String host) {
		assertThat(DiscoveryRejection.of(instance(host, 8080))).isEqualTo(DiscoveryRejection.INVALID_HOST);
	}

	@ParameterizedTest
	@CsvSource({ "0, INVALID_PORT", "-1, INVALID_PORT", "70000, INVALID_PORT", "65536, INVALID_PORT", "1,", "65535," })
	void acceptsPortsFrom1To65535(int port, DiscoveryRejection expected) {
		assertThat(DiscoveryRejection.of(instance("10.0.0.1", port))).isEqualTo(expected);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " " })
	void rejectsABlankHostAsNoHost(String host) {
		assertThat(DiscoveryRejection.of(instance(host, 8080))).isEqualTo(DiscoveryRejection.NO_HOST);
	}

	@org.junit.jupiter.api.Test
	void rejectsANullHostAsNoHostAndNamesTheReasonsAsTheirTags() {
		assertThat(DiscoveryRejection.of(instance(null, 8080))).isEqualTo(DiscoveryRejection.NO_HOST);
		assertThat(DiscoveryRejection.INVALID_HOST.tag()).isEqualTo("invalid-host");
		assertThat(DiscoveryRejection.NO_HOST.tag()).isEqualTo("no-host");
	}

	private static DefaultServiceInstance instance(String host, int port) {
		return new DefaultServiceInstance("i", "svc", host, port, false, Map.of());
	}

}
