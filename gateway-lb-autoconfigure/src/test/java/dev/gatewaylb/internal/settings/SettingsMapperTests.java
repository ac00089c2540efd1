package dev.gatewaylb.internal.settings;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.internal.affinity.AffinitySettings;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.LevelSettings;
import dev.gatewaylb.internal.health.OutlierDetection;
import dev.gatewaylb.internal.hedging.HedgeSettings;
import dev.gatewaylb.internal.loadreports.LoadReportsSettings;
import dev.gatewaylb.internal.websocket.DrainSettings;
import dev.gatewaylb.internal.mirror.MirrorSettings;
import dev.gatewaylb.internal.overload.ConcurrencySettings;
import dev.gatewaylb.internal.request.HashKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link SettingsMapper#resolve}: which layer each key of a service comes from.
 */
class SettingsMapperTests {

	private static final String PATH = "gateway.lb.services.catalog";

	private static final String SECRET = "0123456789abcdef0123456789abcdef";

	@Test
	void takesAKeyTheServiceSetsOverTheSameKeyOfTheDefaults() {
		ServiceSettings settings = resolve(
				layer("algorithm", "least-requests", "pool.max-connections", "3", "retry.attempts", "0"),
				layer("algorithm", "peak-ewma", "pool.max-connections", "9", "retry.attempts", "2"));
		assertThat(settings.balancer().algorithm()).isEqualTo(Algorithm.LEAST_REQUESTS);
		assertThat(settings.upstream().maxConnections()).isEqualTo(3);
		assertThat(settings.retry().attempts()).isZero();
	}

	@ParameterizedTest
	@CsvSource(nullValues = "-",
			value = { "off, preferred, false", "preferred, off, true", "-, off, false", "-, -, true", "OFF, -, false" })
	void groupsConnectionsByEventLoopUnlessTheLayerInForceSaysOff(String service, String defaults, boolean loopAffine) {
		ServiceSettings settings = resolve(
				(service != null) ? layer("pool.loop-affinity", service) : layer("pool.max-connections", "3"),
				(defaults != null) ? layer("pool.loop-affinity", defaults) : layer("pool.max-pending", "7"));
		assertThat(settings.upstream().loopAffine()).isEqualTo(loopAffine);
	}

	@Test
	void takesAKeyTheServiceDoesNotSetFromTheDefaultsEvenInAGroupTheServiceSets() {
		ServiceSettings settings = resolve(
				layer("pool.max-connections", "3", "health.passive.consecutive-failures", "2"),
				layer("pool.max-pending", "7", "health.passive.base-ejection-time", "1m", "slow-start", "20s"));
		assertThat(settings.upstream().maxConnections()).isEqualTo(3);
		assertThat(settings.upstream().maxPending()).isEqualTo(7);
		assertThat(settings.health().passive()).isEqualTo(new OutlierDetection(2, Duration.ofMinutes(1).toNanos(), 50));
		assertThat(settings.balancer().slowStartNanos()).isEqualTo(Duration.ofSeconds(20).toNanos());
	}

	@Test
	void takesAKeySetNowhereFromTheBuiltInDefaults() {
		ServiceSettings builtIn = new ServiceSettings(
				new BalancerSettings(Algorithm.ROUND_ROBIN, 0, Duration.ofSeconds(10).toNanos()), HashKey.CLIENT_IP,
				new UpstreamSettings(256, 256, Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(5),
						Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(60), null, false,
						Duration.ofSeconds(60), 1024, Duration.ofMillis(250), true, 1024, Duration.ZERO, false),
				new HealthSettings(new OutlierDetection(5, Duration.ofSeconds(30).toNanos(), 50),
						new HealthSettings.Active(false, "/actuator/health", Duration.ofSeconds(10),
								Duration.ofSeconds(2)),
						50),
				new RetrySettings(1, Set.of(502, 503, 504), 20, 10),
				new HedgeSettings(0, Duration.ofMillis(5).toNanos(), Set.of("GET", "HEAD", "OPTIONS")),
				ConcurrencySettings.NONE, AffinitySettings.NONE, MirrorSettings.NONE, LoadReportsSettings.OFF,
				DrainSettings.NONE);
		assertThat(resolve(ServiceProperties.NONE, ServiceProperties.NONE)).isEqualTo(builtIn);
		assertThat(resolve(ServiceProperties.NONE, ServiceSettings.BUILT_IN)).isEqualTo(builtIn);
	}

	@ParameterizedTest(name = "service [{0}] over defaults [{1}] -> {2}")
	@CsvSource(delimiter = '|', nullValues = "unset", textBlock = """
			429         | 500,502,503 | 429
			unset       | 500         | 500
			503,500     | unset       | 500,503
			unset       | unset       | 502,503,504
			""")
	void takesAListWholeFromTheFirstLayerThatSetsIt(String service, String defaults, String statuses) {
		ServiceSettings settings = resolve((service != null) ? layer("retry.on-statuses", service) : layer(),
				(defaults != null) ? layer("retry.on-statuses", defaults) : layer());
		assertThat(settings.retry().onStatuses()).containsExactlyInAnyOrder(statuses(statuses));
	}

	@Test
	void takesAnIndexedListWholeFromTheServiceWithoutTheDefaultsElementsBeyondIt() {
		ServiceSettings settings = resolve(layer("retry.on-statuses[0]", "429"),
				layer("retry.on-statuses[0]", "500", "retry.on-statuses[1]", "502", "retry.on-statuses[2]", "503"));
		assertThat(settings.retry().onStatuses()).containsExactly(429);
	}

	@ParameterizedTest(name = "service [{0}] over defaults [{1}] -> {2}")
	@CsvSource(delimiter = '|', nullValues = "unset", textBlock = """
			500         | 502,503,504 | [500]
			unset       | 502,503,504 | [502, 503, 504]
			''          | 502,503,504 | 5xx
			unset       | unset       | 5xx
			""")
	void takesThePassiveFailureStatusesWholeFromTheFirstLayerThatSetsThem(String service, String defaults,
			String statuses) {
		ServiceSettings settings = resolve((service != null) ? layer("health.passive.on-statuses", service) : layer(),
				(defaults != null) ? layer("health.passive.on-statuses", defaults) : layer());
		assertThat(settings.health().passive().failureStatuses()).hasToString(statuses);
	}

	@Test
	void readsTheTrustedCaOfTheLayerInForceAndLetsAServiceClearThatOfTheDefaults() {
		assertThat(resolve(layer(), layer("tls.trusted-ca", "classpath:tls/ca.pem")).upstream().trustedCa())
			.singleElement()
			.satisfies((ca) -> assertThat(ca.getSubjectX500Principal().getName()).isEqualTo("CN=gateway-lb test CA"));
		assertThat(resolve(layer("tls.trusted-ca", ""), layer("tls.trusted-ca", "classpath:tls/ca.pem")).upstream()
			.trustedCa()).isNull();
		assertThat(resolve(layer("tls.trusted-ca", "classpath:tls/ca.pem"),
				layer("tls.trusted-ca", "classpath:tls/missing.pem"))
			.upstream()
			.trustedCa()).hasSize(1);
	}

	@ParameterizedTest(name = "service [{0}] over defaults [{1}]")
	@CsvSource(delimiter = '|', nullValues = "unset",
			textBlock = """
					classpath:tls/missing.pem | unset                     | gateway.lb.services.catalog.tls.trusted-ca | expected: a readable PEM bundle
					classpath:tls/empty.pem   | classpath:tls/ca.pem      | gateway.lb.services.catalog.tls.trusted-ca | found none
					unset                     | classpath:tls/missing.pem | gateway.lb.defaults.tls.trusted-ca         | expected: a readable PEM bundle
					unset                     | classpath:tls/server-key.pem | gateway.lb.defaults.tls.trusted-ca      | expected: a PEM bundle of certificates
					""")
	void namesThePathOfTheLayerAnUnreadableTrustedCaCameFrom(String service, String defaults, String property,
			String reason) {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> resolve((service != null) ? layer("tls.trusted-ca", service) : layer(),
					(defaults != null) ? layer("tls.trusted-ca", defaults) : layer()))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo(property);
				assertThat(ex.getValue()).isEqualTo((service != null) ? service : defaults);
				assertThat(ex.getReason()).contains(reason);
			});
	}

	@Test
	void namesAServiceWhoseIdHasADotInBrackets() {
		GatewayLbProperties properties = new GatewayLbProperties(true, null,
				Map.of("a.b", layer("tls.trusted-ca", "classpath:tls/missing.pem")), null, null, null, null, null);
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> SettingsMapper.map(properties))
			.satisfies((ex) -> assertThat(ex.getName()).isEqualTo("gateway.lb.services[a.b].tls.trusted-ca"));
	}

	@Test
	void resolvesEveryServiceOverTheDefaultsAndAnUnconfiguredServiceToTheDefaults() {
		GatewayLbProperties properties = new GatewayLbProperties(true, layer("slow-start", "7s"),
				Map.of("Catalog", layer("algorithm", "least-requests")), null, null, null, null, null);
		GatewayLbSettings settings = SettingsMapper.map(properties);
		assertThat(settings.configuredServices()).containsExactly("catalog");
		assertThat(settings.forService("CATALOG").balancer()).isEqualTo(new BalancerSettings(Algorithm.LEAST_REQUESTS,
				Duration.ofSeconds(7).toNanos(), Duration.ofSeconds(10).toNanos()));
		assertThat(settings.forService("orders").balancer()).isEqualTo(new BalancerSettings(Algorithm.ROUND_ROBIN,
				Duration.ofSeconds(7).toNanos(), Duration.ofSeconds(10).toNanos()));
	}

	@ParameterizedTest(name = "service [{0}] over defaults [{1}]")
	@CsvSource(delimiter = '|', nullValues = "unset",
			textBlock = """
					concurrency.max-limit=10          | concurrency.min-limit=20 | gateway.lb.services.catalog.concurrency.max-limit | 10 | at least concurrency.min-limit, 20
					concurrency.initial-limit=600     | unset                    | gateway.lb.services.catalog.concurrency.initial-limit | 600 | from concurrency.min-limit to concurrency.max-limit, 1 to 500
					unset                             | concurrency.max-limit=5  | gateway.lb.defaults.concurrency.initial-limit | 20 | 1 to 5
					""")
	void rejectsLimitsThatDoNotFitTogetherNamingTheKeyOfTheLayer(String service, String defaults, String property,
			int value, String reason) {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> resolve((service != null) ? layer(service.split("=")) : layer(),
					(defaults != null) ? layer(defaults.split("=")) : layer()))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo(property);
				assertThat(ex.getValue()).isEqualTo(value);
				assertThat(ex.getReason()).contains(reason);
			});
	}

	@ParameterizedTest(name = "service [{0}] over defaults [{1}]")
	@CsvSource(delimiter = '|', nullValues = "unset",
			textBlock = """
					affinity.cookie=EP                   | unset                                     | gateway.lb.services.catalog.affinity.secret | (not set) | at least 32 bytes
					affinity.cookie=EP                   | affinity.secret=too short to sign with   | gateway.lb.defaults.affinity.secret | (hidden, 22 bytes) | at least 32 bytes
					affinity.previous-secrets=short      | affinity.cookie=EP,affinity.secret=SECRET | gateway.lb.services.catalog.affinity.previous-secrets[0] | (hidden) | at least 32 bytes
					affinity.same-site=none              | unset                                     | gateway.lb.services.catalog.affinity.same-site | None | secure: true with it
					affinity.cookie=EP,affinity.learn=EP | affinity.secret=SECRET                    | gateway.lb.services.catalog.affinity.learn | EP | not affinity.cookie
					""")
	void rejectsAffinityKeysThatDoNotFitTogetherNeverShowingASecret(String service, String defaults, String property,
			String value, String reason) {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> resolve(layer(pairs(service)), layer(pairs(defaults))))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo(property);
				assertThat(ex.getValue()).isEqualTo(value);
				assertThat(ex.getReason()).contains(reason);
				assertThat(ex.getMessage()).doesNotContain("too short to sign with").doesNotContain(SECRET);
			});
	}

	@ParameterizedTest(name = "service [{0}] over defaults [{1}]")
	@CsvSource(delimiter = '|', nullValues = "unset", textBlock = """
			pool.protocol=h2c | http2=true        | gateway.lb.services.catalog.pool.protocol
			http2=true        | pool.protocol=h2c | gateway.lb.defaults.pool.protocol
			""")
	void rejectsH2cWithHttp2NamingTheProtocolKeyOfTheLayer(String service, String defaults, String property) {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> resolve(layer(pairs(service)), layer(pairs(defaults))))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo(property);
				assertThat(ex.getValue()).isEqualTo("h2c");
				assertThat(ex.getReason()).contains("set one of the two");
			});
		assertThat(resolve(layer("pool.protocol", "h2c"), layer()).upstream().h2c()).isTrue();
	}

	@Test
	void anAffinityCookieWithASecretOfTheDefaultsIsOnAndItsTextHidesTheSecret() {
		ServiceSettings settings = resolve(layer("affinity.cookie", "EP", "affinity.learn", "JSESSIONID"),
				layer("affinity.secret", SECRET, "affinity.max-age", "1h"));
		assertThat(settings.affinity().enabled()).isTrue();
		assertThat(settings.affinity().cookie().name()).isEqualTo("EP");
		assertThat(settings.affinity().cookie().maxAge()).isEqualTo(Duration.ofHours(1));
		assertThat(settings.affinity().learn()).isEqualTo("JSESSIONID");
		assertThat(settings.toString()).doesNotContain(SECRET);
		assertThat(resolve(layer(), layer("affinity.secret", SECRET)).affinity().enabled()).isFalse();
	}

	@Test
	void localitiesNeedTheGatewaysZoneAndTakeIt() {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> SettingsMapper.resolve(PATH, layer("locality.enabled", "true"), layer(), null))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo("spring.cloud.loadbalancer.zone");
				assertThat(ex.getReason()).contains("gateway.lb.services.catalog.locality.enabled");
			});
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> SettingsMapper.resolve(PATH, layer(), layer("locality.enabled", "true"), " "))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("gateway.lb.defaults.locality.enabled"));
		ServiceSettings settings = SettingsMapper.resolve(PATH, layer("locality.enabled", "true"),
				layer("locality.overprovisioning-factor", "2"), " eu-west-1a ");
		assertThat(settings.balancer().levels()).isEqualTo(new LevelSettings(true, "eu-west-1a", 2, 0.5, true));
		assertThat(SettingsMapper.resolve(PATH, layer(), layer(), null).balancer().levels().enabled()).isFalse();
	}

	/**
	 * Returns {@code key=value,key=value} as pairs, {@code SECRET} standing for a valid
	 * secret.
	 */
	private static String[] pairs(String text) {
		if (text == null) {
			return new String[0];
		}
		return Arrays.stream(text.split(","))
			.flatMap((pair) -> Arrays.stream(pair.split("=")))
			.map((part) -> part.equals("SECRET") ? SECRET : part)
			.toArray(String[]::new);
	}

	private static ServiceSettings resolve(ServiceProperties service, ServiceProperties defaults) {
		return SettingsMapper.resolve(PATH, service, defaults);
	}

	/**
	 * Binds one layer from {@code key, value} pairs, keys relative to the layer.
	 */
	private static ServiceProperties layer(String... keysAndValues) {
		Map<String, String> values = new HashMap<>();
		for (int i = 0; i < keysAndValues.length; i += 2) {
			values.put("layer." + keysAndValues[i], keysAndValues[i + 1]);
		}
		return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate("layer",
				Bindable.of(ServiceProperties.class));
	}

	private static Integer[] statuses(String list) {
		return Arrays.stream(list.split(",")).map(Integer::valueOf).toArray(Integer[]::new);
	}

}
