package dev.gatewaylb.config;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class GatewayLbPropertiesBinderTests {

	@Test
	void bindsTheDefaultsWhenNothingIsSet() {
		GatewayLbProperties properties = bind(Map.of());
		assertThat(properties.enabled()).isTrue();
		assertThat(properties.defaults().algorithm()).isEqualTo(BalancingAlgorithm.ROUND_ROBIN);
		assertThat(properties.defaults().slowStart()).isZero();
		assertThat(properties.defaults().hashKey()).isEqualTo("client-ip");
		assertThat(properties.defaults().peakEwma().decay()).isEqualTo(Duration.ofSeconds(10));
		assertThat(properties.services()).isEmpty();
		assertThat(properties.trustedProxies()).isEmpty();
	}

	@Test
	void mergesEachServiceOverTheDefaultsOneKeyAtATime() {
		GatewayLbProperties properties = bind(Map.of("gateway.lb.defaults.algorithm", "least-requests",
				"gateway.lb.defaults.slow-start", "30s", "gateway.lb.defaults.peak-ewma.decay", "2s",
				"gateway.lb.services.catalog.algorithm", "peak-ewma", "gateway.lb.services.orders.hash-key",
				"header:X-User", "gateway.lb.services.orders.algorithm", "consistent-hash"));
		ServiceProperties catalog = properties.services().get("catalog");
		assertThat(catalog.algorithm()).isEqualTo(BalancingAlgorithm.PEAK_EWMA);
		assertThat(catalog.slowStart()).isEqualTo(Duration.ofSeconds(30));
		assertThat(catalog.peakEwma().decay()).isEqualTo(Duration.ofSeconds(2));
		assertThat(catalog.hashKey()).isEqualTo("client-ip");
		ServiceProperties orders = properties.services().get("orders");
		assertThat(orders.algorithm()).isEqualTo(BalancingAlgorithm.CONSISTENT_HASH);
		assertThat(orders.hashKey()).isEqualTo("header:X-User");
		assertThat(orders.slowStart()).isEqualTo(Duration.ofSeconds(30));
	}

	@Test
	void keepsTheSettingsOfServiceKeysInAnySpelling() {
		GatewayLbProperties properties = bind(Map.of("gateway.lb.defaults.slow-start", "7s",
				"gateway.lb.services.CATALOG.algorithm", "least-requests", "gateway.lb.services.my_svc.algorithm",
				"power-of-two-choices", "gateway.lb.services[a.b].algorithm", "peak-ewma"));
		assertThat(properties.services()).containsOnlyKeys("CATALOG", "my_svc", "a.b");
		assertThat(properties.services().get("CATALOG").algorithm()).isEqualTo(BalancingAlgorithm.LEAST_REQUESTS);
		assertThat(properties.services().get("my_svc").algorithm()).isEqualTo(BalancingAlgorithm.POWER_OF_TWO_CHOICES);
		assertThat(properties.services().get("a.b").algorithm()).isEqualTo(BalancingAlgorithm.PEAK_EWMA);
		assertThat(properties.services().values())
			.allSatisfy((service) -> assertThat(service.slowStart()).isEqualTo(Duration.ofSeconds(7)));
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			gateway.lb.defaults.algorithm          | round-robbin | gateway.lb.defaults.algorithm
			gateway.lb.services.catalog.algorithm  | fastest      | gateway.lb.services.catalog.algorithm
			gateway.lb.services.catalog.slow-start | soon         | gateway.lb.services.catalog.slow-start
			gateway.lb.services.catalog.slow-start | -5s          | gateway.lb.services.catalog
			gateway.lb.services.catalog.hash-key   | header:      | gateway.lb.services.catalog
			gateway.lb.services.catalog.hash-key   | ip           | gateway.lb.services.catalog
			gateway.lb.defaults.peak-ewma.decay    | 0s           | gateway.lb.defaults.peak-ewma
			gateway.lb.trusted-proxies[0]          | 10.0.0/8     | gateway.lb.trusted-proxies[0]
			gateway.lb.trusted-proxies[0]          | proxy.local  | gateway.lb.trusted-proxies[0]
			""")
	void rejectsAnInvalidValueNamingThePropertyAndTheValue(String property, String value, String reported) {
		assertThatExceptionOfType(BindException.class).isThrownBy(() -> bind(Map.of(property, value)))
			.satisfies((ex) -> {
				assertThat(ex.getName()).hasToString(reported);
				assertThat(fullMessage(ex)).contains(value);
			});
	}

	@Test
	void parsesTrustedProxiesAsNetworks() throws Exception {
		GatewayLbProperties properties = bind(
				Map.of("gateway.lb.trusted-proxies[0]", "10.0.0.0/8", "gateway.lb.trusted-proxies[1]", "::1"));
		assertThat(properties.trustedProxies()).hasSize(2);
		assertThat(properties.trustedProxies().get(0).contains(InetAddress.getByName("10.200.3.4"))).isTrue();
		assertThat(properties.trustedProxies().get(0).contains(InetAddress.getByName("11.0.0.1"))).isFalse();
		assertThat(properties.trustedProxies().get(1).contains(InetAddress.getByName("::1"))).isTrue();
	}

	static GatewayLbProperties bind(Map<String, Object> values) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", values));
		return GatewayLbPropertiesBinder.bind(environment);
	}

	static String fullMessage(Throwable ex) {
		StringBuilder message = new StringBuilder();
		for (Throwable t = ex; t != null; t = t.getCause()) {
			message.append(t.getMessage()).append('\n');
		}
		return message.toString();
	}

}
