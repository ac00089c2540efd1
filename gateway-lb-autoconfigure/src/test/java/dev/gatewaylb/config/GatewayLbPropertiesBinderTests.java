package dev.gatewaylb.config;

import dev.gatewaylb.internal.settings.GatewayLbPropertiesBinder;

import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
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
	void bindsNoServiceKeyWhenNothingIsSet() {
		GatewayLbProperties properties = bind(Map.of());
		assertThat(properties.enabled()).isTrue();
		assertThat(properties.defaults()).isEqualTo(ServiceProperties.NONE);
		assertThat(properties.services()).isEmpty();
		assertThat(properties.splits()).isEmpty();
		assertThat(properties.trustedProxies()).isEmpty();
	}

	@Test
	void bindsEachServiceWithOnlyTheKeysItSets() {
		GatewayLbProperties properties = bind(Map.of("gateway.lb.defaults.algorithm", "least-requests",
				"gateway.lb.defaults.pool.max-pending", "7", "gateway.lb.services.catalog.algorithm", "peak-ewma",
				"gateway.lb.services.catalog.pool.max-connections", "3",
				"gateway.lb.services.catalog.health.passive.base-ejection-time", "30s"));
		assertThat(properties.defaults()).isEqualTo(new ServiceProperties(BalancingAlgorithm.LEAST_REQUESTS, null, null,
				null, null, new PoolProperties(null, 7, null, null, null, null), null, null, null, null, null, null,
				null, null, null, null, null, null));
		assertThat(properties.services()).containsOnlyKeys("catalog");
		assertThat(properties.services().get("catalog")).isEqualTo(new ServiceProperties(BalancingAlgorithm.PEAK_EWMA,
				null, null, null, null, new PoolProperties(3, null, null, null, null, null), null, null, null,
				new HealthProperties(
						new HealthProperties.Passive(null, Duration.ofSeconds(30), null, null, null, null, null), null,
						null),
				null, null, null, null, null, null, null, null));
	}

	@Test
	void keepsServiceKeysInAnySpelling() {
		GatewayLbProperties properties = bind(Map.of("gateway.lb.services.CATALOG.algorithm", "least-requests",
				"gateway.lb.services.my_svc.algorithm", "power-of-two-choices", "gateway.lb.services[a.b].algorithm",
				"peak-ewma"));
		assertThat(properties.services()).containsOnlyKeys("CATALOG", "my_svc", "a.b");
		assertThat(properties.services().get("CATALOG").algorithm()).isEqualTo(BalancingAlgorithm.LEAST_REQUESTS);
		assertThat(properties.services().get("my_svc").algorithm()).isEqualTo(BalancingAlgorithm.POWER_OF_TWO_CHOICES);
		assertThat(properties.services().get("a.b").algorithm()).isEqualTo(BalancingAlgorithm.PEAK_EWMA);
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

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|',
			textBlock = """
					gateway.lb.defaults.health.passive.consecutive-failures         | -1     | gateway.lb.defaults.health.passive         | consecutive-failures: -1 (expected: 0 to 1000000)
					gateway.lb.services.catalog.health.passive.base-ejection-time   | 0s     | gateway.lb.services.catalog.health.passive | base-ejection-time: 0s (expected: > 0s, at most 1h)
					gateway.lb.services.catalog.health.passive.max-ejection-percent | 101    | gateway.lb.services.catalog.health.passive | max-ejection-percent: 101 (expected: 0 to 100)
					gateway.lb.defaults.health.passive.latency-factor               | 1      | gateway.lb.defaults.health.passive         | latency-factor: 1.0 (expected: 0 (off) or > 1, at most 1000, e.g. 3)
					gateway.lb.services.catalog.health.passive.latency-factor       | -3     | gateway.lb.services.catalog.health.passive | latency-factor: -3.0 (expected: 0 (off) or > 1, at most 1000, e.g. 3)
					gateway.lb.services.catalog.health.passive.latency-factor       | NaN    | gateway.lb.services.catalog.health.passive | latency-factor: NaN (expected: 0 (off) or > 1, at most 1000, e.g. 3)
					gateway.lb.defaults.health.passive.success-rate.stdev-factor    | 0      | gateway.lb.defaults.health.passive.success-rate | stdev-factor: 0.0 (expected: > 0, at most 1000, e.g. 1.9)
					gateway.lb.defaults.health.passive.success-rate.confidence      | 1      | gateway.lb.defaults.health.passive.success-rate | confidence: 1.0 (expected: 0 (no test) to below 1, e.g. 0.999)
					gateway.lb.defaults.health.passive.success-rate.interval        | 0s     | gateway.lb.defaults.health.passive.success-rate | interval: 0s (expected: > 0s, at most 1h)
					gateway.lb.services.catalog.health.passive.failure-percentage.threshold | 101 | gateway.lb.services.catalog.health.passive.failure-percentage | threshold: 101 (expected: 0 to 100)
					gateway.lb.defaults.health.active.path                          | health | gateway.lb.defaults.health.active          | path: 'health' (expected: a path starting with /)
					gateway.lb.services.catalog.health.active.interval              | -10s   | gateway.lb.services.catalog.health.active  | interval: -10s (expected: > 0s, at most 1h)
					gateway.lb.defaults.health.active.timeout                       | 0ms    | gateway.lb.defaults.health.active          | timeout: 0s (expected: > 0s, at most 1h)
					gateway.lb.services.catalog.retry.attempts                      | -1     | gateway.lb.services.catalog.retry          | attempts: -1 (expected: 0 to 10)
					gateway.lb.defaults.retry.on-statuses                           | 99     | gateway.lb.defaults.retry                  | on-statuses: 99 (expected: an HTTP status, 100 to 599)
					gateway.lb.services.catalog.retry.on-statuses[1]                | 600    | gateway.lb.services.catalog.retry          | on-statuses: 600 (expected: an HTTP status, 100 to 599)
					gateway.lb.defaults.retry.budget-percent                        | -5     | gateway.lb.defaults.retry                  | budget-percent: -5 (expected: 0 to 1000)
					gateway.lb.services.catalog.retry.budget-min-per-second         | -1     | gateway.lb.services.catalog.retry          | budget-min-per-second: -1 (expected: 0 to 1000000)
					gateway.lb.defaults.hash-balance-factor                         | 1.0    | gateway.lb.defaults                        | hash-balance-factor: 1.0 (expected: 0 (off) or > 1, at most 1000, e.g. 1.25)
					gateway.lb.services.catalog.hash-balance-factor                 | 0.5    | gateway.lb.services.catalog                | hash-balance-factor: 0.5 (expected: 0 (off) or > 1, at most 1000, e.g. 1.25)
					gateway.lb.services.catalog.hash-balance-factor                 | -1.25  | gateway.lb.services.catalog                | hash-balance-factor: -1.25 (expected: 0 (off) or > 1, at most 1000, e.g. 1.25)
					gateway.lb.defaults.hash-balance-factor                         | NaN    | gateway.lb.defaults                        | hash-balance-factor: NaN (expected: 0 (off) or > 1, at most 1000, e.g. 1.25)
					gateway.lb.splits.shop.override-header                          | X Test | gateway.lb.splits.shop                     | override-header: 'X Test' (expected: a header name)
					gateway.lb.defaults.hedge.max-extra-load                        | 1.5    | gateway.lb.defaults.hedge                  | max-extra-load: 1.5 (expected: 0 (off) to 1, e.g. 0.05 to hedge after p95)
					gateway.lb.services.catalog.hedge.max-extra-load                | -0.05  | gateway.lb.services.catalog.hedge          | max-extra-load: -0.05 (expected: 0 (off) to 1, e.g. 0.05 to hedge after p95)
					gateway.lb.services.catalog.hedge.max-extra-load                | NaN    | gateway.lb.services.catalog.hedge          | max-extra-load: NaN (expected: 0 (off) to 1, e.g. 0.05 to hedge after p95)
					gateway.lb.defaults.hedge.min-delay                             | -5ms   | gateway.lb.defaults.hedge                  | min-delay: -5ms (expected: 0s to 1d)
					gateway.lb.services.catalog.hedge.methods                       | GE T   | gateway.lb.services.catalog.hedge          | methods: GE T (expected: HTTP methods, e.g. GET, HEAD, OPTIONS)
					gateway.lb.defaults.concurrency.initial-limit                   | 0      | gateway.lb.defaults.concurrency            | initial-limit: 0 (expected: 1 to 65536)
					gateway.lb.services.catalog.concurrency.min-limit               | -1     | gateway.lb.services.catalog.concurrency    | min-limit: -1 (expected: 1 to 65536)
					gateway.lb.services.catalog.concurrency.max-limit               | 0      | gateway.lb.services.catalog.concurrency    | max-limit: 0 (expected: 1 to 65536)
					gateway.lb.services.catalog.concurrency.partition-by            | ip     | gateway.lb.services.catalog.concurrency    | partition-by: 'ip' (expected: client-ip, header:NAME or cookie:NAME)
					gateway.lb.services.catalog.concurrency.partitions.batch        | 1.5    | gateway.lb.services.catalog.concurrency    | partitions.batch: 1.5 (expected: a share of the limit above 0, at most 1, e.g. 0.8)
					gateway.lb.defaults.concurrency.partitions.batch                | 0      | gateway.lb.defaults.concurrency            | partitions.batch: 0.0 (expected: a share of the limit above 0, at most 1, e.g. 0.8)
					gateway.lb.services.catalog.concurrency.max-wait                | 20s    | gateway.lb.services.catalog.concurrency    | max-wait: PT20S (expected: from 0s, shed at once, to 10s)
					gateway.lb.defaults.concurrency.max-wait                        | -1s    | gateway.lb.defaults.concurrency            | max-wait: PT-1S (expected: from 0s, shed at once, to 10s)
					gateway.lb.services.catalog.concurrency.max-wait-per-client     | 1.5    | gateway.lb.services.catalog.concurrency    | max-wait-per-client: 1.5 (expected: a share of the wait queue above 0, at most 1, e.g. 0.1)
					gateway.lb.defaults.concurrency.max-wait-per-client             | 0      | gateway.lb.defaults.concurrency            | max-wait-per-client: 0.0 (expected: a share of the wait queue above 0, at most 1, e.g. 0.1)
					gateway.lb.defaults.concurrency.drop-statuses                   | 600    | gateway.lb.defaults.concurrency            | drop-statuses: 600 (expected: HTTP statuses, 100 to 599, e.g. 503, 504)
					gateway.lb.services.catalog.mirror.strip-headers                | a b    | gateway.lb.services.catalog.mirror         | strip-headers: a b (expected: header names, e.g. Authorization, Cookie)
					gateway.lb.actuator.allowed-hosts                               | http://gw.example | gateway.lb.actuator | allowed-hosts[0]: 'http://gw.example' (expected: a host name, or *.domain for the names under it, without scheme or port)
					gateway.lb.defaults.slow-start                                  | 3601s  | gateway.lb.defaults                        | slow-start: 3601s (expected: 0s to 1h)
					gateway.lb.services.catalog.hash-balance-factor                 | 1000.5 | gateway.lb.services.catalog                | hash-balance-factor: 1000.5 (expected: 0 (off) or > 1, at most 1000, e.g. 1.25)
					gateway.lb.defaults.peak-ewma.decay                             | 3601s  | gateway.lb.defaults.peak-ewma              | decay: 3601s (expected: > 0s, at most 1h)
					gateway.lb.services.catalog.pool.max-connections                | 65537  | gateway.lb.services.catalog.pool           | max-connections: 65537 (expected: 1 to 65536)
					gateway.lb.defaults.pool.max-pending                            | 65537  | gateway.lb.defaults.pool                   | max-pending: 65537 (expected: 1 to 65536)
					gateway.lb.defaults.pool.pending-timeout                        | 86401s | gateway.lb.defaults.pool                   | pending-timeout: 86401s (expected: 0s to 1d)
					gateway.lb.services.catalog.pool.max-idle-time                  | 2d     | gateway.lb.services.catalog.pool           | max-idle-time: 2d (expected: > 0s, at most 1d)
					gateway.lb.defaults.timeouts.connect                            | 86401s | gateway.lb.defaults.timeouts               | connect: 86401s (expected: > 0s, at most 1d)
					gateway.lb.services.catalog.timeouts.response                   | 86401s | gateway.lb.services.catalog.timeouts       | response: 86401s (expected: 0s to 1d)
					gateway.lb.services.catalog.timeouts.response                   | 1000000000d | gateway.lb.services.catalog.timeouts  | response: 1000000000d (expected: 0s to 1d)
					gateway.lb.defaults.timeouts.body-idle                          | 86401s | gateway.lb.defaults.timeouts               | body-idle: 86401s (expected: 0s to 1d)
					gateway.lb.defaults.timeouts.request-body-idle                  | 86401s | gateway.lb.defaults.timeouts               | request-body-idle: 86401s (expected: 0s to 1d)
					gateway.lb.defaults.timeouts.response-write-idle                | 86401s | gateway.lb.defaults.timeouts               | response-write-idle: 86401s (expected: 0s to 1d)
					gateway.lb.defaults.timeouts.request-body-min-rate              | 1025MB | gateway.lb.defaults.timeouts               | request-body-min-rate: 1074790400B (expected: 0B to 1GB, a size per second)
					gateway.lb.defaults.timeouts.happy-eyeballs                     | 61s    | gateway.lb.defaults.timeouts               | happy-eyeballs: 61s (expected: 0s to 1m)
					gateway.lb.defaults.health.passive.consecutive-failures         | 1000001 | gateway.lb.defaults.health.passive        | consecutive-failures: 1000001 (expected: 0 to 1000000)
					gateway.lb.defaults.health.passive.base-ejection-time           | 3601s  | gateway.lb.defaults.health.passive         | base-ejection-time: 3601s (expected: > 0s, at most 1h)
					gateway.lb.defaults.health.passive.latency-factor               | 1000.5 | gateway.lb.defaults.health.passive         | latency-factor: 1000.5 (expected: 0 (off) or > 1, at most 1000, e.g. 3)
					gateway.lb.defaults.health.passive.latency-factor               | Infinity | gateway.lb.defaults.health.passive       | latency-factor: Infinity (expected: 0 (off) or > 1, at most 1000, e.g. 3)
					gateway.lb.defaults.health.passive.success-rate.stdev-factor    | 1000.5 | gateway.lb.defaults.health.passive.success-rate | stdev-factor: 1000.5 (expected: > 0, at most 1000, e.g. 1.9)
					gateway.lb.defaults.health.passive.success-rate.minimum-hosts   | 10001  | gateway.lb.defaults.health.passive.success-rate | minimum-hosts: 10001 (expected: 1 to 10000)
					gateway.lb.defaults.health.passive.success-rate.request-volume  | 1000000001 | gateway.lb.defaults.health.passive.success-rate | request-volume: 1000000001 (expected: 1 to 1000000000)
					gateway.lb.defaults.health.passive.success-rate.interval        | 3601s  | gateway.lb.defaults.health.passive.success-rate | interval: 3601s (expected: > 0s, at most 1h)
					gateway.lb.defaults.health.passive.failure-percentage.minimum-hosts  | 10001 | gateway.lb.defaults.health.passive.failure-percentage | minimum-hosts: 10001 (expected: 1 to 10000)
					gateway.lb.defaults.health.passive.failure-percentage.request-volume | 1000000001 | gateway.lb.defaults.health.passive.failure-percentage | request-volume: 1000000001 (expected: 1 to 1000000000)
					gateway.lb.defaults.health.active.interval                      | 3601s  | gateway.lb.defaults.health.active          | interval: 3601s (expected: > 0s, at most 1h)
					gateway.lb.defaults.health.active.timeout                       | 3601s  | gateway.lb.defaults.health.active          | timeout: 3601s (expected: > 0s, at most 1h)
					gateway.lb.defaults.retry.attempts                              | 11     | gateway.lb.defaults.retry                  | attempts: 11 (expected: 0 to 10)
					gateway.lb.defaults.retry.budget-percent                        | 1001   | gateway.lb.defaults.retry                  | budget-percent: 1001 (expected: 0 to 1000)
					gateway.lb.defaults.retry.budget-min-per-second                 | 1000001 | gateway.lb.defaults.retry                 | budget-min-per-second: 1000001 (expected: 0 to 1000000)
					gateway.lb.defaults.hedge.min-delay                             | 86401s | gateway.lb.defaults.hedge                  | min-delay: 86401s (expected: 0s to 1d)
					gateway.lb.defaults.drain.websocket-grace                       | -1s    | gateway.lb.defaults.drain                  | websocket-grace: -1s (expected: 0s to 1d)
					gateway.lb.services.catalog.drain.websocket-grace               | 86401s | gateway.lb.services.catalog.drain          | websocket-grace: 86401s (expected: 0s to 1d)
					gateway.lb.defaults.concurrency.initial-limit                   | 65537  | gateway.lb.defaults.concurrency            | initial-limit: 65537 (expected: 1 to 65536)
					gateway.lb.defaults.concurrency.min-limit                       | 65537  | gateway.lb.defaults.concurrency            | min-limit: 65537 (expected: 1 to 65536)
					gateway.lb.defaults.concurrency.max-limit                       | 65537  | gateway.lb.defaults.concurrency            | max-limit: 65537 (expected: 1 to 65536)
					gateway.lb.defaults.affinity.max-age                            | 401d   | gateway.lb.defaults.affinity               | max-age: 401d (expected: 0s to 400d)
					gateway.lb.defaults.locality.overprovisioning-factor            | 1000.5 | gateway.lb.defaults.locality               | overprovisioning-factor: 1000.5 (expected: > 1, at most 1000, e.g. 1.4)
					gateway.lb.services.catalog.mirror.max-concurrent               | 65537  | gateway.lb.services.catalog.mirror         | max-concurrent: 65537 (expected: 1 to 65536)
					gateway.lb.services.catalog.mirror.max-body                     | 1025MB | gateway.lb.services.catalog.mirror         | max-body: 1074790400B (expected: 0B to 1GB, a copy in memory)
					gateway.lb.splits.shop.targets.shop-canary                      | 1000001 | gateway.lb.splits.shop                    | targets.shop-canary: 1000001 (expected: 0 to 1000000)
					gateway.lb.splits.shop.sticky.max-age                           | 401d   | gateway.lb.splits.shop.sticky              | max-age: 401d (expected: 0s to 400d)
					gateway.lb.dns.min-ttl                                          | 86401s | gateway.lb.dns                             | min-ttl: 86401s (expected: whole seconds, 0s to 1d)
					gateway.lb.dns.max-ttl                                          | 86401s | gateway.lb.dns                             | max-ttl: 86401s (expected: whole seconds, 0s to 1d)
					gateway.lb.dns.negative-ttl                                     | 86401s | gateway.lb.dns                             | negative-ttl: 86401s (expected: whole seconds, 0s to 1d)
					""")
	void rejectsAValueAgainstItsRuleNamingThePropertyAndTheExpectation(String property, String value, String reported,
			String expectation) {
		Map<String, Object> values = new HashMap<>(Map.of(property, value));
		if (property.endsWith("[1]")) {
			values.put(property.replace("[1]", "[0]"), "503");
		}
		if (property.contains(".sticky.")) {
			// A sticky block without a cookie is rejected for that first.
			values.put(property.substring(0, property.indexOf(".sticky.")) + ".sticky.cookie", "c");
		}
		assertThatExceptionOfType(BindException.class).isThrownBy(() -> bind(values)).satisfies((ex) -> {
			assertThat(ex.getName()).hasToString(reported);
			assertThat(fullMessage(ex)).contains(expectation);
		});
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', nullValues = "NULL", textBlock = """
			secure left unset   | NULL
			secure set to false | false
			""")
	void rejectsASameSiteNoneCookieThatIsNotSecure(String description, String secure) {
		Map<String, Object> values = new HashMap<>(
				Map.of("gateway.lb.splits.shop.sticky.cookie", "c", "gateway.lb.splits.shop.sticky.same-site", "None"));
		if (secure != null) {
			values.put("gateway.lb.splits.shop.sticky.secure", secure);
		}
		assertThatExceptionOfType(BindException.class).isThrownBy(() -> bind(values)).satisfies((ex) -> {
			assertThat(ex.getName()).hasToString("gateway.lb.splits.shop.sticky");
			assertThat(fullMessage(ex)).contains("same-site: None with secure: false (expected: secure: true");
		});
		values.put("gateway.lb.splits.shop.sticky.secure", "true");
		assertThat(bind(values).splits().get("shop").sticky().sameSite()).isEqualTo(StickyProperties.SameSite.NONE);
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
