package dev.gatewaylb.internal.settings;

import java.io.InputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.internal.health.OutlierDetection;
import dev.gatewaylb.internal.mirror.MirrorSettings;
import dev.gatewaylb.internal.retry.RetryBudget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Every numeric key at its upper bound binds and maps, and nothing derived from it
 * overflows: durations become nanoseconds, counts are multiplied. A value just above each
 * bound is rejected where it is bound ({@code GatewayLbPropertiesBinderTests},
 * {@code RolloutSettingsTests}).
 */
class UpperBoundSettingsTests {

	private static final String SECRET = "0123456789abcdef0123456789abcdef";

	/**
	 * Each numeric key of a service at its largest value, relative to the service.
	 */
	private static final Map<String, String> SERVICE_MAXIMA = Map.ofEntries(Map.entry("slow-start", "1h"),
			Map.entry("hash-balance-factor", "1000"), Map.entry("peak-ewma.decay", "1h"),
			Map.entry("pool.max-connections", "65536"), Map.entry("pool.max-pending", "65536"),
			Map.entry("pool.pending-timeout", "1d"), Map.entry("pool.max-idle-time", "1d"),
			Map.entry("timeouts.connect", "1d"), Map.entry("timeouts.response", "1d"),
			Map.entry("timeouts.body-idle", "1d"), Map.entry("timeouts.request-body-idle", "1d"),
			Map.entry("timeouts.response-write-idle", "1d"), Map.entry("timeouts.request-body-min-rate", "1GB"),
			Map.entry("timeouts.response-write-min-rate", "1GB"), Map.entry("timeouts.max-duration", "1d"),
			Map.entry("timeouts.happy-eyeballs", "1m"), Map.entry("health.passive.consecutive-failures", "1000000"),
			Map.entry("health.passive.base-ejection-time", "1h"),
			Map.entry("health.passive.max-ejection-percent", "100"), Map.entry("health.passive.on-statuses", "599"),
			Map.entry("health.passive.latency-factor", "1000"),
			Map.entry("health.passive.success-rate.stdev-factor", "1000"),
			Map.entry("health.passive.success-rate.minimum-hosts", "10000"),
			Map.entry("health.passive.success-rate.request-volume", "1000000000"),
			Map.entry("health.passive.success-rate.interval", "1h"),
			// Below 1, which would make every outlier certain.
			Map.entry("health.passive.success-rate.confidence", "0.999999"),
			Map.entry("health.passive.failure-percentage.threshold", "100"),
			Map.entry("health.passive.failure-percentage.minimum-hosts", "10000"),
			Map.entry("health.passive.failure-percentage.request-volume", "1000000000"),
			Map.entry("health.active.interval", "1h"), Map.entry("health.active.timeout", "1h"),
			Map.entry("health.max-drain-percent", "100"), Map.entry("retry.attempts", "10"),
			Map.entry("retry.on-statuses", "599"), Map.entry("retry.budget-percent", "1000"),
			Map.entry("retry.budget-min-per-second", "1000000"), Map.entry("hedge.max-extra-load", "1"),
			Map.entry("hedge.min-delay", "1d"), Map.entry("concurrency.initial-limit", "65536"),
			Map.entry("concurrency.min-limit", "65536"), Map.entry("concurrency.max-limit", "65536"),
			Map.entry("concurrency.partitions.batch", "1"), Map.entry("concurrency.max-wait", "10s"),
			Map.entry("concurrency.max-wait-per-client", "1"), Map.entry("concurrency.drop-statuses", "599"),
			Map.entry("affinity.max-age", "400d"), Map.entry("affinity.max-load-factor", "100"),
			Map.entry("locality.overprovisioning-factor", "1000"), Map.entry("locality.panic-threshold", "1"),
			Map.entry("mirror.percent", "100"), Map.entry("mirror.max-concurrent", "65536"),
			// Shorter than weight-expiration-period, which it must be.
			Map.entry("load-reports.blackout-period", "59m"), Map.entry("load-reports.weight-expiration-period", "1h"),
			Map.entry("load-reports.error-utilization-penalty", "100"),
			Map.entry("load-reports.max-weight-ratio", "1000"), Map.entry("load-reports.probe.interval", "1h"),
			Map.entry("drain.websocket-grace", "1d"),
			// 1GB held at once: max-concurrent x max-body.
			Map.entry("mirror.max-body", "16KB"));

	private static final Map<String, String> DNS_MAXIMA = Map.of("min-ttl", "1d", "max-ttl", "1d", "negative-ttl",
			"1d");

	private static final Pattern NUMERIC_TYPE = Pattern
		.compile("\\b(java\\.lang\\.(Integer|Long|Short|Double|Float)|java\\.time\\.Duration|"
				+ "org\\.springframework\\.util\\.unit\\.DataSize|java\\.math\\.\\w+|int|long|short|double|float)\\b");

	@Test
	void bindsEveryKeyAtItsUpperBoundAndMapsItWithoutOverflow() {
		Map<String, String> values = new HashMap<>();
		SERVICE_MAXIMA.forEach((key, value) -> {
			values.put("gateway.lb.defaults." + key, value);
			values.put("gateway.lb.services.catalog." + key, value);
		});
		values.put("gateway.lb.services.catalog.affinity.cookie", "EP");
		values.put("gateway.lb.services.catalog.affinity.secret", SECRET);
		// The other end of the product: one copy of the largest body.
		values.put("gateway.lb.services.archive.mirror.max-concurrent", "1");
		values.put("gateway.lb.services.archive.mirror.max-body", "1GB");
		DNS_MAXIMA.forEach((key, value) -> values.put("gateway.lb.dns." + key, value));
		String split = "gateway.lb.splits.shop.";
		values.putAll(Map.of(split + "targets.shop-stable", "1000000", split + "targets.shop-canary", "1000000",
				split + "sticky.cookie", "c", split + "sticky.max-age", "400d", split + "rollout.target", "shop-canary",
				split + "rollout.steps", "100", split + "rollout.interval", "7d", split + "rollout.min-requests",
				"1000000000", split + "rollout.max-error-rate-increase", "1", split + "rollout.max-latency-ratio",
				"1000"));
		values.putAll(Map.of(split + "rollout.error-statuses", "599", split + "rollout.max-outcomes-per-client",
				"1000000", split + "rollout.min-clients", "1000", split + "rollout.max-mismatch-rate", "1"));

		GatewayLbSettings settings = SettingsMapper.map(new Binder(new MapConfigurationPropertySource(values))
			.bindOrCreate("gateway.lb", Bindable.of(GatewayLbProperties.class)));

		for (String id : List.of("catalog", "defaulted")) {
			ServiceSettings service = settings.forService(id);
			long hour = Duration.ofHours(1).toNanos();
			assertThat(service.balancer().slowStartNanos()).isEqualTo(hour);
			assertThat(service.balancer().ewmaDecayNanos()).isEqualTo(hour);
			OutlierDetection passive = service.health().passive();
			assertThat(passive.baseEjectionNanos()).isEqualTo(hour);
			assertThat(Math.multiplyExact(passive.baseEjectionNanos(), OutlierDetection.MAX_EJECTION_MULTIPLIER))
				.as("the longest ejection")
				.isEqualTo(10 * hour);
			assertThat(passive.successRate().intervalNanos()).isEqualTo(hour);
			assertThat(passive.successRate().requestVolume()).isEqualTo(1_000_000_000L);
			assertThat(service.health().active().timeout().toNanos()).isEqualTo(hour);
			UpstreamSettings upstream = service.upstream();
			assertThat(upstream.maxConnections()).isEqualTo(65536);
			// The connect timeout is handed to Netty as int milliseconds, and the
			// timeouts
			// are measured in nanoseconds.
			assertThat(Math.toIntExact(upstream.connectTimeout().toMillis())).isEqualTo(86_400_000);
			for (Duration timeout : List.of(upstream.connectTimeout(), upstream.responseTimeout(),
					upstream.bodyIdleTimeout(), upstream.requestBodyIdleTimeout(), upstream.responseWriteIdleTimeout(),
					upstream.pendingTimeout(), upstream.maxIdleTime())) {
				assertThat(timeout.toNanos()).isEqualTo(Duration.ofDays(1).toNanos());
			}
			assertThat(upstream.happyEyeballs().toNanos()).isEqualTo(Duration.ofMinutes(1).toNanos());
			assertThat(upstream.requestBodyMinRate()).isEqualTo(DataSize.ofGigabytes(1).toBytes());
			assertThat(service.retry().attempts()).isEqualTo(10);
			assertThat(service.hedge().minDelayNanos()).isEqualTo(Duration.ofDays(1).toNanos());
			assertThat(service.concurrency().limits().maxLimit()).isEqualTo(65536);
			assertThat(service.mirror().maxConcurrent() * service.mirror().maxBodyBytes())
				.isEqualTo(MirrorSettings.MAX_BYTES_HELD);
		}
		assertThat(settings.forService("catalog").affinity().cookie().toResponseCookie("v", false).getMaxAge())
			.isEqualTo(Duration.ofDays(400));
		assertThat(settings.forService("archive").mirror().maxBodyBytes()).isEqualTo(MirrorSettings.MAX_BYTES_HELD);
		// The largest budget and floor count in a long.
		RetryBudget budget = new RetryBudget(1000, 1_000_000, () -> 0L);
		budget.requested();
		assertThat(budget.tryRetry()).isTrue();
		SplitSettings shop = settings.split("shop");
		assertThat(shop.sticky().maxAge()).isEqualTo(Duration.ofDays(400));
		assertThat(shop.rollout().intervalNanos()).isEqualTo(Duration.ofDays(7).toNanos());
		assertThat(shop.rollout().minRequests()).isEqualTo(1_000_000_000L);
		assertThat(shop.layout(0).targets()).hasSize(2);
		assertThat(Math.toIntExact(settings.dns().maxTtl().toSeconds())).isEqualTo(86_400);
	}

	@Test
	@SuppressWarnings("unchecked")
	void everyNumericKeyOfTheMetadataHasItsUpperBoundAbove() throws Exception {
		Map<String, Object> metadata;
		try (InputStream json = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			metadata = JsonMapper.builder().build().readValue(json, Map.class);
		}
		List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata.get("properties");
		List<String> numeric = properties.stream()
			.filter((p) -> p.get("type") != null && NUMERIC_TYPE.matcher((String) p.get("type")).find())
			.map((p) -> (String) p.get("name"))
			.filter((name) -> name.startsWith("gateway.lb."))
			.toList();
		assertThat(numeric).contains("gateway.lb.defaults.pool.max-connections", "gateway.lb.dns.max-ttl");
		// A map's key (concurrency.partitions) is there with an entry.
		assertThat(numeric).allSatisfy((name) -> {
			Map<String, String> maxima = name.startsWith("gateway.lb.dns.") ? DNS_MAXIMA : SERVICE_MAXIMA;
			String key = name.replaceFirst("^gateway\\.lb\\.(defaults|dns)\\.", "");
			assertThat(name).startsWith((maxima == DNS_MAXIMA) ? "gateway.lb.dns." : "gateway.lb.defaults.");
			assertThat(maxima.keySet()).as(name)
				.anyMatch((maximum) -> maximum.equals(key) || maximum.startsWith(key + "."));
		});
	}

	@ParameterizedTest(name = "service [{0}] over defaults [{1}]")
	@CsvSource(delimiter = '|', nullValues = "unset",
			textBlock = """
					mirror.max-concurrent=65536 | unset                 | gateway.lb.services.catalog.mirror.max-concurrent | 65536 | at most 16384, since max-concurrent copies of max-body (64KB) are held in memory at once, 1GB at most
					mirror.max-body=1GB         | unset                 | gateway.lb.services.catalog.mirror.max-body       | 1GB   | at most 16MB, since max-concurrent (64) copies of max-body are held in memory at once, 1GB at most
					mirror.max-concurrent=100   | mirror.max-body=16MB  | gateway.lb.services.catalog.mirror.max-concurrent | 100   | at most 64,
					mirror.max-body=16MB        | mirror.max-concurrent=100 | gateway.lb.services.catalog.mirror.max-body   | 16MB  | at most 10737418B,
					unset                       | mirror.max-concurrent=128,mirror.max-body=16MB | gateway.lb.defaults.mirror.max-body | 16MB | at most 8MB,
					""")
	void rejectsMirroredCopiesHoldingMoreThanAGigabyteNamingTheKeyOfTheLayer(String service, String defaults,
			String property, String value, String reason) {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> SettingsMapper.resolve("gateway.lb.services.catalog", layer(service), layer(defaults)))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo(property);
				assertThat(ex.getValue()).hasToString(value);
				assertThat(ex.getReason()).startsWith("expected: " + reason);
			});
	}

	@Test
	void takesMirroredCopiesHoldingAGigabyteAtOnce() {
		ServiceSettings settings = SettingsMapper.resolve("gateway.lb.services.catalog",
				layer("mirror.max-concurrent=64"), layer("mirror.max-body=16MB"));
		assertThat(settings.mirror().maxConcurrent() * settings.mirror().maxBodyBytes())
			.isEqualTo(MirrorSettings.MAX_BYTES_HELD);
	}

	/**
	 * Binds one layer from {@code key=value,key=value}, keys relative to the layer.
	 */
	private static ServiceProperties layer(String pairs) {
		Map<String, String> values = new HashMap<>();
		if (pairs != null) {
			for (String pair : pairs.split(",")) {
				String[] keyAndValue = pair.split("=");
				values.put("layer." + keyAndValue[0], keyAndValue[1]);
			}
		}
		return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate("layer",
				Bindable.of(ServiceProperties.class));
	}

}
