package dev.gatewaylb.internal.settings;

import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.health.FailureStatuses;
import dev.gatewaylb.internal.overload.core.ConcurrencyLimits;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.mirror.MirrorSettings;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Binds random subsets of valid keys, each set under {@code defaults}, under a service,
 * under both or nowhere, through {@link GatewayLbSettings#bind}, and checks that binding
 * succeeds and that every resolved value is the one of the layer that wins: the
 * service's, else the defaults', else the built-in default.
 */
class SettingsLayersPropertyTests {

	private static final long SEED = 20250611L;

	private static final int ITERATIONS = 300;

	private static final String NONE = "none";

	private static final String SECRET = "0123456789abcdef0123456789abcdef";

	private static final String OTHER_SECRET = "a secret of more than 32 bytes in UTF-8: \u00e9t\u00e9";

	/**
	 * Every leaf key of a service: its built-in value, then valid values as written and
	 * as resolved. A list value is written comma-separated.
	 */
	private static final List<Key> CATALOGUE = List.of(
			key("algorithm", (s) -> s.balancer().algorithm(), Algorithm.ROUND_ROBIN, "least-requests",
					Algorithm.LEAST_REQUESTS, "peak-ewma", Algorithm.PEAK_EWMA, "CONSISTENT_HASH",
					Algorithm.CONSISTENT_HASH, "power-of-two-choices", Algorithm.POWER_OF_TWO_CHOICES, "round-robin",
					Algorithm.ROUND_ROBIN),
			key("slow-start", (s) -> Duration.ofNanos(s.balancer().slowStartNanos()), Duration.ZERO, "30s",
					Duration.ofSeconds(30), "1m", Duration.ofMinutes(1), "250ms", Duration.ofMillis(250)),
			key("hash-key", ServiceSettings::hashKey, HashKey.CLIENT_IP, "header:X-User",
					new HashKey(HashKey.Source.HEADER, "X-User"), "cookie:session",
					new HashKey(HashKey.Source.COOKIE, "session"), "client-ip", HashKey.CLIENT_IP),
			key("hash-balance-factor", (s) -> s.balancer().hashBalanceFactor(), 0.0, "1.25", 1.25, "2", 2.0, "0", 0.0),
			key("peak-ewma.decay", (s) -> Duration.ofNanos(s.balancer().ewmaDecayNanos()), Duration.ofSeconds(10), "2s",
					Duration.ofSeconds(2), "PT1M", Duration.ofMinutes(1)),
			key("pool.max-connections", (s) -> s.upstream().maxConnections(), 256, "1", 1, "64", 64),
			key("pool.max-pending", (s) -> s.upstream().maxPending(), 256, "1", 1, "1000", 1000),
			key("pool.pending-timeout", (s) -> s.upstream().pendingTimeout(), Duration.ofSeconds(5), "0s",
					Duration.ZERO, "250ms", Duration.ofMillis(250)),
			key("pool.max-idle-time", (s) -> s.upstream().maxIdleTime(), Duration.ofSeconds(30), "10s",
					Duration.ofSeconds(10), "2m", Duration.ofMinutes(2)),
			key("pool.loop-affinity", (s) -> s.upstream().loopAffine(), true, "off", false, "preferred", true),
			// Never with http2: true, as resolved (Layers.keepH2cFromHttp2).
			key("pool.protocol", (s) -> s.upstream().h2c(), false, "h2c", true, "http1", false, "H2C", true),
			key("timeouts.connect", (s) -> s.upstream().connectTimeout(), Duration.ofSeconds(5), "500ms",
					Duration.ofMillis(500), "1s", Duration.ofSeconds(1)),
			key("timeouts.response", (s) -> s.upstream().responseTimeout(), Duration.ofSeconds(30), "0s", Duration.ZERO,
					"45s", Duration.ofSeconds(45)),
			key("timeouts.body-idle", (s) -> s.upstream().bodyIdleTimeout(), Duration.ZERO, "100ms",
					Duration.ofMillis(100), "5s", Duration.ofSeconds(5)),
			key("timeouts.request-body-idle", (s) -> s.upstream().requestBodyIdleTimeout(), Duration.ofSeconds(60),
					"0s", Duration.ZERO, "1s", Duration.ofSeconds(1), "2m", Duration.ofMinutes(2)),
			key("timeouts.response-write-idle", (s) -> s.upstream().responseWriteIdleTimeout(), Duration.ofSeconds(60),
					"0s", Duration.ZERO, "5s", Duration.ofSeconds(5)),
			key("timeouts.request-body-min-rate", (s) -> s.upstream().requestBodyMinRate(), 1024L, "0", 0L, "64KB",
					65536L, "100B", 100L),
			key("timeouts.response-write-min-rate", (s) -> s.upstream().responseWriteMinRate(), 1024L, "0", 0L, "64KB",
					65536L, "100B", 100L),
			key("timeouts.max-duration", (s) -> s.upstream().maxDuration(), Duration.ZERO, "10m",
					Duration.ofMinutes(10), "0s", Duration.ZERO),
			key("timeouts.happy-eyeballs", (s) -> s.upstream().happyEyeballs(), Duration.ofMillis(250), "0s",
					Duration.ZERO, "100ms", Duration.ofMillis(100)),
			key("tls.trusted-ca", (s) -> subject(s.upstream().trustedCa()), NONE, "classpath:tls/ca.pem",
					"CN=gateway-lb test CA", "classpath:tls/server.pem", "CN=localhost", "", NONE),
			key("http2", (s) -> s.upstream().http2(), false, "true", true, "false", false),
			key("health.passive.consecutive-failures", (s) -> s.health().passive().consecutiveFailures(), 5, "0", 0,
					"3", 3),
			key("health.passive.base-ejection-time", (s) -> Duration.ofNanos(s.health().passive().baseEjectionNanos()),
					Duration.ofSeconds(30), "1s", Duration.ofSeconds(1), "2m", Duration.ofMinutes(2), "30s",
					Duration.ofSeconds(30)),
			key("health.passive.max-ejection-percent", (s) -> s.health().passive().maxEjectionPercent(), 50, "0", 0,
					"100", 100, "10", 10),
			key("health.max-drain-percent", (s) -> s.health().maxDrainPercent(), 50, "0", 0, "100", 100, "30", 30),
			key("health.passive.latency-factor", (s) -> s.health().passive().latencyFactor(), 0.0, "3", 3.0, "1.5", 1.5,
					"0", 0.0),
			key("health.passive.success-rate.enabled", (s) -> s.health().passive().successRate().enabled(), false,
					"true", true, "false", false),
			key("health.passive.success-rate.stdev-factor", (s) -> s.health().passive().successRate().stdevFactor(),
					1.9, "1", 1.0, "3.5", 3.5),
			key("health.passive.success-rate.interval",
					(s) -> Duration.ofNanos(s.health().passive().successRate().intervalNanos()), Duration.ofSeconds(10),
					"1s", Duration.ofSeconds(1), "1m", Duration.ofMinutes(1)),
			key("health.passive.success-rate.confidence", (s) -> s.health().passive().successRate().confidence(), 0.999,
					"0", 0.0, "0.99", 0.99),
			key("health.passive.success-rate.minimum-hosts", (s) -> s.health().passive().successRate().minimumHosts(),
					5, "3", 3, "10", 10),
			key("health.passive.success-rate.request-volume", (s) -> s.health().passive().successRate().requestVolume(),
					100L, "20", 20L, "1000", 1000L),
			key("health.passive.failure-percentage.enabled", (s) -> s.health().passive().failurePercentage().enabled(),
					false, "true", true, "false", false),
			key("health.passive.failure-percentage.minimum-hosts",
					(s) -> s.health().passive().failurePercentage().minimumHosts(), 5, "2", 2, "8", 8),
			key("health.passive.failure-percentage.request-volume",
					(s) -> s.health().passive().failurePercentage().requestVolume(), 50L, "10", 10L, "500", 500L),
			key("health.passive.failure-percentage.threshold",
					(s) -> s.health().passive().failurePercentage().thresholdPercent(), 85, "50", 50, "100", 100),
			key("hedge.max-extra-load", (s) -> s.hedge().maxExtraLoad(), 0.0, "0.05", 0.05, "1", 1.0, "0", 0.0),
			key("hedge.min-delay", (s) -> Duration.ofNanos(s.hedge().minDelayNanos()), Duration.ofMillis(5), "20ms",
					Duration.ofMillis(20), "0s", Duration.ZERO, "1s", Duration.ofSeconds(1)),
			key("hedge.methods", (s) -> s.hedge().methods(), Set.of("GET", "HEAD", "OPTIONS"), "GET,DELETE",
					Set.of("GET", "DELETE"), "get", Set.of("GET"), "PUT,head", Set.of("PUT", "HEAD")),
			key("concurrency.limit", (s) -> s.concurrency().limits().algorithm(), ConcurrencyLimits.Algorithm.NONE,
					"gradient2", ConcurrencyLimits.Algorithm.GRADIENT2, "vegas", ConcurrencyLimits.Algorithm.VEGAS,
					"aimd", ConcurrencyLimits.Algorithm.AIMD, "fixed", ConcurrencyLimits.Algorithm.FIXED, "none",
					ConcurrencyLimits.Algorithm.NONE),
			// Values that keep min <= initial <= max in any mix of layers.
			key("concurrency.initial-limit", (s) -> s.concurrency().limits().initialLimit(), 20, "10", 10, "50", 50),
			key("concurrency.drop-statuses", (s) -> s.concurrency().dropStatuses().stream().boxed().toList(),
					List.of(503, 504), "503", List.of(503), "429,503,504", List.of(429, 503, 504)),
			key("concurrency.min-limit", (s) -> s.concurrency().limits().minLimit(), 1, "2", 2, "5", 5),
			key("concurrency.max-limit", (s) -> s.concurrency().limits().maxLimit(), 500, "100", 100, "1000", 1000),
			key("concurrency.partition-by", (s) -> String.valueOf(s.concurrency().partitionBy()), "null",
					"header:X-Priority", "header:X-Priority", "cookie:tier", "cookie:tier", "", "null"),
			key("concurrency.partitions", (s) -> s.concurrency().partitions(), Map.of(), "critical=0.8,batch=0.2",
					Map.of("critical", 0.8, "batch", 0.2), "gold=0.5", Map.of("gold", 0.5)),
			key("concurrency.max-wait", (s) -> s.concurrency().maxWait(), Duration.ZERO, "50ms", Duration.ofMillis(50),
					"1s", Duration.ofSeconds(1), "0s", Duration.ZERO),
			key("concurrency.max-wait-per-client", (s) -> s.concurrency().maxWaitPerClient(), 0.1, "0.25", 0.25, "1",
					1.0),
			key("affinity.cookie", (s) -> s.affinity().cookie().name(), "", "GWLB_EP", "GWLB_EP", "sid", "sid", "", ""),
			key("affinity.max-load-factor", (s) -> s.affinity().maxLoadFactor(), 2.0, "1.5", 1.5, "0", 0.0),
			key("affinity.secret", (s) -> s.affinity().secret(), "", SECRET, SECRET, OTHER_SECRET, OTHER_SECRET),
			key("affinity.previous-secrets", (s) -> s.affinity().previousSecrets(), List.of(), OTHER_SECRET,
					List.of(OTHER_SECRET), OTHER_SECRET + "," + SECRET, List.of(OTHER_SECRET, SECRET), "", List.of()),
			key("affinity.learn", (s) -> String.valueOf(s.affinity().learn()), "null", "JSESSIONID", "JSESSIONID",
					"SESSION", "SESSION", "", "null"),
			key("affinity.max-age", (s) -> s.affinity().cookie().maxAge(), Duration.ZERO, "1h", Duration.ofHours(1),
					"30m", Duration.ofMinutes(30), "0s", Duration.ZERO),
			key("affinity.path", (s) -> s.affinity().cookie().path(), "/", "/app", "/app", "/", "/"),
			key("affinity.secure", (s) -> s.affinity().cookie().secure(), false, "true", true, "false", false),
			key("affinity.http-only", (s) -> s.affinity().cookie().httpOnly(), true, "false", false, "true", true),
			// None needs secure: true, which another layer's draw may not give it.
			key("affinity.same-site", (s) -> s.affinity().cookie().sameSite(), "Lax", "strict", "Strict", "LAX", "Lax"),
			key("locality.enabled", (s) -> s.balancer().levels().enabled(), false, "true", true, "false", false),
			key("locality.overprovisioning-factor", (s) -> s.balancer().levels().overprovisioningFactor(), 1.4, "2",
					2.0, "1.1", 1.1),
			key("locality.panic-threshold", (s) -> s.balancer().levels().panicThreshold(), 0.5, "0", 0.0, "1", 1.0,
					"0.25", 0.25),
			key("locality.load-aware", (s) -> s.balancer().levels().loadAware(), true, "false", false, "true", true),
			key("mirror.target", (s) -> String.valueOf(s.mirror().target()), "null", "shadow", "shadow", "Other-Shadow",
					"other-shadow", "", "null"),
			key("mirror.percent", (s) -> s.mirror().percent(), 100, "0", 0, "5", 5),
			key("mirror.max-concurrent", (s) -> s.mirror().maxConcurrent(), 64, "1", 1, "500", 500),
			key("mirror.max-body", (s) -> s.mirror().maxBodyBytes(), 65536L, "0", 0L, "1MB", 1048576L),
			key("mirror.compare", (s) -> s.mirror().compare(), MirrorSettings.Compare.STATUS, "none",
					MirrorSettings.Compare.NONE, "body", MirrorSettings.Compare.BODY, "STATUS",
					MirrorSettings.Compare.STATUS),
			key("mirror.methods", (s) -> s.mirror().methods(), Set.of("GET", "HEAD"), "GET,POST", Set.of("GET", "POST"),
					"get", Set.of("GET")),
			key("mirror.strip-headers", (s) -> s.mirror().stripHeaders(),
					List.of("Authorization", "Cookie", "Proxy-Authorization"), "X-Api-Key", List.of("X-Api-Key"),
					"Authorization,X-Api-Key", List.of("Authorization", "X-Api-Key")),
			key("load-reports.enabled", (s) -> s.loadReports().enabled(), false, "true", true, "false", false),
			key("load-reports.utilization", (s) -> s.loadReports().weights().utilization(),
					List.of("application_utilization", "cpu_utilization"), "cpu_utilization",
					List.of("cpu_utilization"), "named_metrics.kv_cache,application_utilization",
					List.of("named_metrics.kv_cache", "application_utilization")),
			// Every blackout drawn is shorter than every expiration drawn, as they must
			// be.
			key("load-reports.blackout-period", (s) -> s.loadReports().weights().blackoutNanos(), 10_000_000_000L, "0s",
					0L, "30s", 30_000_000_000L),
			key("load-reports.weight-expiration-period", (s) -> s.loadReports().weights().expirationNanos(),
					180_000_000_000L, "1h", 3_600_000_000_000L, "5m", 300_000_000_000L),
			key("load-reports.error-utilization-penalty", (s) -> s.loadReports().weights().errorUtilizationPenalty(),
					1.0, "0", 0.0, "2.5", 2.5),
			key("load-reports.max-weight-ratio", (s) -> s.loadReports().weights().maxWeightRatio(), 10.0, "1", 1.0,
					"100", 100.0),
			key("load-reports.probe.path", (s) -> String.valueOf(s.loadReports().probePath()), "null", "/orca", "/orca",
					"", "null"),
			key("load-reports.probe.interval", (s) -> s.loadReports().probeInterval(), Duration.ofSeconds(10), "1s",
					Duration.ofSeconds(1), "1m", Duration.ofMinutes(1)),
			key("drain.websocket-grace", (s) -> s.drain().websocketGraceNanos(), 0L, "30s", 30_000_000_000L, "0s", 0L,
					"1h", 3_600_000_000_000L),
			key("health.passive.on-statuses", (s) -> s.health().passive().failureStatuses(),
					FailureStatuses.SERVER_ERRORS, "502,503,504", FailureStatuses.of(List.of(502, 503, 504)), "500",
					FailureStatuses.of(List.of(500)), "599,500", FailureStatuses.of(List.of(500, 599)), "",
					FailureStatuses.SERVER_ERRORS),
			key("health.active.enabled", (s) -> s.health().active().enabled(), false, "true", true, "false", false),
			key("health.active.path", (s) -> s.health().active().path(), "/actuator/health", "/health", "/health",
					"/ping", "/ping"),
			key("health.active.interval", (s) -> s.health().active().interval(), Duration.ofSeconds(10), "1s",
					Duration.ofSeconds(1), "30s", Duration.ofSeconds(30)),
			key("health.active.timeout", (s) -> s.health().active().timeout(), Duration.ofSeconds(2), "500ms",
					Duration.ofMillis(500), "5s", Duration.ofSeconds(5)),
			key("retry.attempts", (s) -> s.retry().attempts(), 1, "0", 0, "3", 3),
			key("retry.on-statuses", (s) -> s.retry().onStatuses(), Set.of(502, 503, 504), "500,502", Set.of(500, 502),
					"429", Set.of(429), "503,500,504", Set.of(500, 503, 504), "", Set.of()),
			key("retry.budget-percent", (s) -> s.retry().budgetPercent(), 20, "0", 0, "50", 50),
			key("retry.budget-min-per-second", (s) -> s.retry().budgetMinPerSecond(), 10, "0", 0, "100", 100));

	private static final List<String> SERVICE_IDS = List.of("catalog", "Orders", "my_svc", "a.b");

	@Test
	void resolvesEveryKeyFromTheLayerThatWinsForRandomSubsetsOfValidKeys() {
		Random random = new Random(SEED);
		for (int iteration = 0; iteration < ITERATIONS; iteration++) {
			Layers layers = Layers.draw(random);
			String context = "seed " + SEED + ", iteration " + iteration + ", properties " + layers.properties;
			GatewayLbSettings settings;
			try {
				settings = GatewayLbSettings.bind(environment(layers.properties));
			}
			catch (RuntimeException ex) {
				throw new AssertionError("Binding failed with " + context, ex);
			}
			for (String id : SERVICE_IDS) {
				for (Key key : CATALOGUE) {
					Object expected = layers.expected(id, key);
					assertThat(key.read.apply(settings.forService(id))).as("%s of %s, %s", key.name, id, context)
						.isEqualTo(expected);
					assertThat(key.read.apply(settings.forService(id.toUpperCase(Locale.ROOT))))
						.as("%s of %s in upper case, %s", key.name, id, context)
						.isEqualTo(expected);
				}
			}
			for (Key key : CATALOGUE) {
				assertThat(key.read.apply(settings.forService("unconfigured")))
					.as("%s of a service without an entry, %s", key.name, context)
					.isEqualTo(layers.expected(null, key));
			}
		}
	}

	@Test
	void catalogueCoversEveryKeyWithTwoValuesAtLeast() throws Exception {
		assertThat(CATALOGUE).extracting(Key::name)
			.containsExactlyInAnyOrderElementsOf(BuiltInDefaultsTests.metadataDefaults().keySet());
		assertThat(CATALOGUE).allSatisfy((key) -> assertThat(key.values).as(key.name).hasSizeGreaterThanOrEqualTo(2));
	}

	private static StandardEnvironment environment(Map<String, Object> properties) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		// A service may turn localities on, which needs the gateway's zone.
		environment.getPropertySources()
			.addLast(new MapPropertySource("zone", Map.of("spring.cloud.loadbalancer.zone", "zone-a")));
		return environment;
	}

	private static String subject(@Nullable List<X509Certificate> certificates) {
		return (certificates != null) ? certificates.get(0).getSubjectX500Principal().getName() : NONE;
	}

	private static Key key(String name, Function<ServiceSettings, Object> read, Object builtIn,
			Object... textsAndValues) {
		List<Value> values = new ArrayList<>();
		for (int i = 0; i < textsAndValues.length; i += 2) {
			values.add(new Value((String) textsAndValues[i], textsAndValues[i + 1]));
		}
		return new Key(name, read, builtIn, values);
	}

	private record Key(String name, Function<ServiceSettings, Object> read, Object builtIn, List<Value> values) {

	}

	private record Value(String text, Object resolved) {

	}

	/**
	 * One draw: which keys {@code defaults} and each service set, and the properties that
	 * say so.
	 */
	private static final class Layers {

		private final Map<String, Value> defaults = new LinkedHashMap<>();

		private final Map<String, Map<String, Value>> services = new LinkedHashMap<>();

		private final Map<String, Object> properties = new LinkedHashMap<>();

		/**
		 * Draws a density per layer so that both a lone key and nearly every key occur,
		 * then, for each key, whether and with which value each layer sets it. A service
		 * that sets a key the defaults set too gets another value, so the winner shows.
		 */
		static Layers draw(Random random) {
			Layers layers = new Layers();
			double defaultsDensity = density(random);
			for (Key key : CATALOGUE) {
				// A shadow for every service is refused: mirroring is per service.
				if (random.nextDouble() < defaultsDensity && !key.name.equals("mirror.target")) {
					Value value = key.values.get(random.nextInt(key.values.size()));
					layers.defaults.put(key.name, value);
					layers.write("gateway.lb.defaults." + key.name, value, random);
				}
			}
			for (String id : SERVICE_IDS) {
				double density = density(random);
				Map<String, Value> service = new LinkedHashMap<>();
				for (Key key : CATALOGUE) {
					if (random.nextDouble() < density) {
						List<Value> candidates = new ArrayList<>(key.values);
						candidates.remove(layers.defaults.get(key.name));
						Value value = candidates.get(random.nextInt(candidates.size()));
						service.put(key.name, value);
						layers.write(servicePrefix(id) + key.name, value, random);
					}
				}
				layers.services.put(id, service);
			}
			layers.giveSecretsWhereNeeded(random);
			layers.keepH2cFromHttp2(random);
			return layers;
		}

		/**
		 * Sets a secret in each layer whose keys, as resolved, set an affinity cookie
		 * without one: a cookie needs a secret, which a random draw need not give it.
		 */
		private void giveSecretsWhereNeeded(Random random) {
			Key cookie = key("affinity.cookie");
			Key secret = key("affinity.secret");
			Value value = secret.values.get(0);
			if (!"".equals(expected(null, cookie)) && "".equals(expected(null, secret))) {
				this.defaults.put(secret.name, value);
				write("gateway.lb.defaults." + secret.name, value, random);
			}
			for (String id : SERVICE_IDS) {
				if (!"".equals(expected(id, cookie)) && "".equals(expected(id, secret))) {
					this.services.get(id).put(secret.name, value);
					write(servicePrefix(id) + secret.name, value, random);
				}
			}
		}

		/**
		 * Speaks HTTP/1.1 in each layer whose keys, as resolved, ask for h2c and h2 by
		 * ALPN at once, which is refused: a random draw may give both.
		 */
		private void keepH2cFromHttp2(Random random) {
			Key protocol = key("pool.protocol");
			Key http2 = key("http2");
			Value http1 = protocol.values.get(1);
			if (Boolean.TRUE.equals(expected(null, protocol)) && Boolean.TRUE.equals(expected(null, http2))) {
				this.defaults.put(protocol.name, http1);
				write("gateway.lb.defaults." + protocol.name, http1, random);
			}
			for (String id : SERVICE_IDS) {
				if (Boolean.TRUE.equals(expected(id, protocol)) && Boolean.TRUE.equals(expected(id, http2))) {
					this.services.get(id).put(protocol.name, http1);
					write(servicePrefix(id) + protocol.name, http1, random);
				}
			}
		}

		private static Key key(String name) {
			return CATALOGUE.stream().filter((key) -> key.name.equals(name)).findFirst().orElseThrow();
		}

		private static double density(Random random) {
			// A quarter of the layers set nothing or a key or two.
			return random.nextBoolean() ? random.nextDouble() : random.nextDouble() * 0.1;
		}

		Object expected(@Nullable String id, Key key) {
			Value value = (id != null) ? this.services.get(id).get(key.name) : null;
			if (value == null) {
				value = this.defaults.get(key.name);
			}
			return (value != null) ? value.resolved : key.builtIn;
		}

		/**
		 * Writes a value, a non-empty list either comma-separated or element by element,
		 * as YAML would.
		 */
		private void write(String property, Value value, Random random) {
			if (value.resolved instanceof Map<?, ?>) {
				// A map, entry by entry: partitions.critical=0.8.
				for (String entry : value.text.split(",")) {
					String[] pair = entry.split("=");
					this.properties.put(property + "." + pair[0], pair[1]);
				}
				return;
			}
			boolean list = value.resolved instanceof Set<?> || value.resolved instanceof FailureStatuses;
			if (list && !value.text.isEmpty() && random.nextBoolean()) {
				String[] elements = value.text.split(",");
				for (int i = 0; i < elements.length; i++) {
					this.properties.put(property + "[" + i + "]", elements[i]);
				}
			}
			else {
				this.properties.put(property, value.text);
			}
		}

		private static String servicePrefix(String id) {
			return (id.indexOf('.') >= 0) ? "gateway.lb.services[" + id + "]." : "gateway.lb.services." + id + ".";
		}

	}

}
