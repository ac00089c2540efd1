package dev.gatewaylb.internal.settings;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.config.GatewayLbProperties;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code gateway.lb.dns}: its defaults, the servers parsed without asking any resolver,
 * and invalid values rejected at bind time naming the key and the value.
 */
class DnsSettingsTests {

	@Test
	void defaultsToTheSystemsResolversWithThirtySecondsAtMostAndTwoForAFailure() {
		assertThat(map(Map.of()))
			.isEqualTo(new DnsSettings(Duration.ZERO, Duration.ofSeconds(30), Duration.ofSeconds(2), List.of()));
	}

	@Test
	void takesServersAsIpAddressesAndPortsInOrder() throws Exception {
		DnsSettings dns = map(Map.of("gateway.lb.dns.servers", "10.0.0.2:53,[fd00::2]:5353", "gateway.lb.dns.max-ttl",
				"5m", "gateway.lb.dns.negative-ttl", "0s"));
		assertThat(dns.servers()).containsExactly(new InetSocketAddress(InetAddress.getByName("10.0.0.2"), 53),
				new InetSocketAddress(InetAddress.getByName("fd00::2"), 5353));
		assertThat(dns.maxTtl()).isEqualTo(Duration.ofMinutes(5));
		assertThat(dns.negativeTtl()).isZero();
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			servers      | dns.example:53 | servers: 'dns.example:53' (expected: an IP address and a port
			servers      | 10.0.0.2       | servers: '10.0.0.2' (expected: an IP address and a port
			servers      | 10.0.0.2:0     | servers: '10.0.0.2:0' (expected: an IP address and a port
			min-ttl      | 1m             | min-ttl: 1m (expected: at most max-ttl, 30s)
			negative-ttl | 500ms          | negative-ttl: 500ms (expected: whole seconds, 0s to 1d)
			max-ttl      | -1s            | max-ttl: -1s (expected: whole seconds, 0s to 1d)
			""")
	void rejectsAnInvalidValueNamingTheKey(String key, String value, String reason) {
		assertThatExceptionOfType(BindException.class).isThrownBy(() -> map(Map.of("gateway.lb.dns." + key, value)))
			.satisfies((ex) -> {
				assertThat(ex.getName()).hasToString("gateway.lb.dns");
				assertThat(ex).rootCause().hasMessageStartingWith(reason);
			});
	}

	private static DnsSettings map(Map<String, String> values) {
		GatewayLbProperties properties = new Binder(new MapConfigurationPropertySource(values))
			.bindOrCreate("gateway.lb", Bindable.of(GatewayLbProperties.class));
		return SettingsMapper.map(properties).dns();
	}

}
