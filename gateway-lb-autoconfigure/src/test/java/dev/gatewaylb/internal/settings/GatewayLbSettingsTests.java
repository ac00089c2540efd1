package dev.gatewaylb.internal.settings;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.request.HashKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link GatewayLbSettings#bind}, the entry point of start-up and refresh.
 */
class GatewayLbSettingsTests {

	// The custom property source that presented defaults under every service misaligned
	// the names it derived once a second key was set: valid configuration failed.
	@ParameterizedTest(name = "{0} with {1}")
	@CsvSource(delimiter = '|', nullValues = "nothing else", textBlock = """
			gateway.lb.services.x | nothing else
			gateway.lb.defaults   | nothing else
			gateway.lb.services.x | gateway.lb.services.x.slow-start
			gateway.lb.services.x | gateway.lb.services.y.slow-start
			gateway.lb.defaults   | gateway.lb.services.x.slow-start
			""")
	void bindsBaseEjectionTimeSetWithoutTheOtherPassiveKeys(String scope, String other) {
		Map<String, Object> values = new HashMap<>();
		values.put(scope + ".health.passive.base-ejection-time", "30s");
		if (other != null) {
			values.put(other, "10s");
		}
		GatewayLbSettings settings = bind(values);
		assertThat(settings.forService("x").health().passive().baseEjectionNanos())
			.isEqualTo(Duration.ofSeconds(30).toNanos());
		assertThat(settings.forService("x").health().passive().consecutiveFailures()).isEqualTo(5);
		assertThat(settings.forService("x").health().passive().maxEjectionPercent()).isEqualTo(50);
	}

	@Test
	void resolvesEachServiceOverTheDefaultsOneKeyAtATime() {
		GatewayLbSettings settings = bind(Map.of("gateway.lb.defaults.algorithm", "least-requests",
				"gateway.lb.defaults.slow-start", "30s", "gateway.lb.defaults.peak-ewma.decay", "2s",
				"gateway.lb.services.catalog.algorithm", "peak-ewma", "gateway.lb.services.orders.hash-key",
				"header:X-User", "gateway.lb.services.orders.algorithm", "consistent-hash"));
		assertThat(settings.forService("catalog").balancer()).isEqualTo(new BalancerSettings(Algorithm.PEAK_EWMA,
				Duration.ofSeconds(30).toNanos(), Duration.ofSeconds(2).toNanos()));
		assertThat(settings.forService("catalog").hashKey()).isEqualTo(HashKey.CLIENT_IP);
		assertThat(settings.forService("orders").balancer()).isEqualTo(new BalancerSettings(Algorithm.CONSISTENT_HASH,
				Duration.ofSeconds(30).toNanos(), Duration.ofSeconds(2).toNanos()));
		assertThat(settings.forService("orders").hashKey()).isEqualTo(new HashKey(HashKey.Source.HEADER, "X-User"));
		assertThat(settings.forService("unconfigured").balancer()).isEqualTo(new BalancerSettings(
				Algorithm.LEAST_REQUESTS, Duration.ofSeconds(30).toNanos(), Duration.ofSeconds(2).toNanos()));
	}

	@Test
	void findsServicesInAnySpellingCaseInsensitively() {
		GatewayLbSettings settings = bind(Map.of("gateway.lb.defaults.slow-start", "7s",
				"gateway.lb.services.CATALOG.algorithm", "least-requests", "gateway.lb.services.my_svc.algorithm",
				"power-of-two-choices", "gateway.lb.services[a.b].algorithm", "peak-ewma"));
		assertThat(settings.configuredServices()).containsExactlyInAnyOrder("catalog", "my_svc", "a.b");
		assertThat(settings.forService("catalog").balancer().algorithm()).isEqualTo(Algorithm.LEAST_REQUESTS);
		assertThat(settings.forService("Catalog")).isSameAs(settings.forService("catalog"));
		assertThat(settings.forService("MY_SVC").balancer().algorithm()).isEqualTo(Algorithm.POWER_OF_TWO_CHOICES);
		assertThat(settings.forService("A.B").balancer().algorithm()).isEqualTo(Algorithm.PEAK_EWMA);
		assertThat(settings.configuredServices())
			.allSatisfy((id) -> assertThat(settings.forService(id).balancer().slowStartNanos())
				.isEqualTo(Duration.ofSeconds(7).toNanos()));
	}

	@Test
	void rejectsAnInvalidSimpleDiscoveryWeightLikeStartUp() {
		String instance = "spring.cloud.discovery.client.simple.instances.catalog[0]";
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(
					() -> bind(Map.of(instance + ".uri", "http://127.0.0.1:1", instance + ".metadata.weight", "-3")))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo(instance + ".metadata.weight");
				assertThat(ex.getValue()).isEqualTo("-3");
			});
	}

	@Test
	void bindsEqualSettingsTwiceFromTheSameConfiguration() {
		Map<String, Object> values = Map.of("gateway.lb.defaults.tls.trusted-ca", "classpath:tls/ca.pem",
				"gateway.lb.services.catalog.retry.on-statuses", "500,503", "gateway.lb.splits.shop.targets.a", "9",
				"gateway.lb.splits.shop.targets.b", "1", "gateway.lb.splits.shop.sticky.cookie", "AFFINITY",
				"gateway.lb.trusted-proxies[0]", "10.0.0.0/8");
		GatewayLbSettings first = bind(values);
		GatewayLbSettings second = bind(values);
		assertThat(second).isNotSameAs(first).isEqualTo(first).hasSameHashCodeAs(first);
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			gateway.lb.services.catalog.retry.on-statuses | 500
			gateway.lb.defaults.tls.trusted-ca            | classpath:tls/server.pem
			gateway.lb.splits.shop.targets.a              | 8
			gateway.lb.splits.shop.sticky.max-age         | 1h
			gateway.lb.trusted-proxies[0]                 | 10.0.0.0/16
			""")
	void bindsUnequalSettingsWhenOneValueDiffers(String property, String value) {
		Map<String, Object> values = new HashMap<>(Map.of("gateway.lb.defaults.tls.trusted-ca", "classpath:tls/ca.pem",
				"gateway.lb.services.catalog.retry.on-statuses", "500,503", "gateway.lb.splits.shop.targets.a", "9",
				"gateway.lb.splits.shop.targets.b", "1", "gateway.lb.splits.shop.sticky.cookie", "AFFINITY",
				"gateway.lb.trusted-proxies[0]", "10.0.0.0/8"));
		GatewayLbSettings before = bind(values);
		values.put(property, value);
		assertThat(bind(values)).isNotEqualTo(before);
	}

	@ParameterizedTest(name = "same-site {0}, secure {1}, over HTTPS {2} -> {3}")
	@CsvSource(delimiter = '|', textBlock = """
			None   | true  | false | GWLB=v; Path=/; Secure; HttpOnly; SameSite=None
			Lax    | false | false | GWLB=v; Path=/; HttpOnly; SameSite=Lax
			Lax    | false | true  | GWLB=v; Path=/; Secure; HttpOnly; SameSite=Lax
			strict | true  | false | GWLB=v; Path=/; Secure; HttpOnly; SameSite=Strict
			""")
	void buildsTheAffinityCookieWithItsAttributes(String sameSite, String secure, boolean overHttps, String setCookie) {
		GatewayLbSettings settings = bind(Map.of("gateway.lb.splits.shop.targets.a", "1",
				"gateway.lb.splits.shop.sticky.cookie", "GWLB", "gateway.lb.splits.shop.sticky.same-site", sameSite,
				"gateway.lb.splits.shop.sticky.secure", secure));
		assertThat(settings.splits().get("shop").sticky().toResponseCookie("v", overHttps)).hasToString(setCookie);
	}

	static GatewayLbSettings bind(Map<String, Object> values) {
		return GatewayLbSettings.bind(environment(values));
	}

	static StandardEnvironment environment(Map<String, Object> values) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", values));
		return environment;
	}

}
