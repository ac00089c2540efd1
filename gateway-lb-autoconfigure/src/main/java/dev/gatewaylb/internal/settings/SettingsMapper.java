package dev.gatewaylb.internal.settings;

import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.gatewaylb.internal.config.CookieSettings;
import dev.gatewaylb.internal.config.Layers;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.LevelSettings;
import dev.gatewaylb.config.BalancingAlgorithm;
import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.HealthProperties;
import dev.gatewaylb.config.HealthProperties.Active;
import dev.gatewaylb.config.HealthProperties.Passive;
import dev.gatewaylb.config.LoopAffinity;
import dev.gatewaylb.config.PeakEwmaProperties;
import dev.gatewaylb.config.PoolProperties;
import dev.gatewaylb.config.RetryProperties;
import dev.gatewaylb.config.RolloutProperties;
import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.config.SplitProperties;
import dev.gatewaylb.config.StickyProperties;
import dev.gatewaylb.config.TimeoutProperties;
import dev.gatewaylb.config.TlsProperties;
import dev.gatewaylb.internal.health.FailureStatuses;
import dev.gatewaylb.internal.health.OutlierDetection;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.rollout.RolloutPlan;
import dev.gatewaylb.internal.split.Split;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Maps the bound {@code gateway.lb} properties to {@link GatewayLbSettings}: resolves
 * each service's keys over {@code defaults} and the {@link BuiltInDefaults built-in
 * defaults}, and checks the rules that span keys or need I/O. Pure apart from reading
 * {@code tls.trusted-ca} bundles; stateless and thread-safe.
 */
final class SettingsMapper {

	static final String DEFAULTS_PATH = Layers.DEFAULTS_PATH;

	/**
	 * Spring Cloud LoadBalancer's property for the zone the application runs in: the
	 * gateway's zone.
	 */
	static final String ZONE_PROPERTY = "spring.cloud.loadbalancer.zone";

	private static final Function<ServiceProperties, @Nullable Passive> PASSIVE = Layers.in(ServiceProperties::health,
			HealthProperties::passive);

	private static final Function<ServiceProperties, @Nullable Active> ACTIVE = Layers.in(ServiceProperties::health,
			HealthProperties::active);

	private static final Function<ServiceProperties, HealthProperties.@Nullable SuccessRate> SUCCESS_RATE = Layers
		.in(PASSIVE, Passive::successRate);

	private static final Function<ServiceProperties, HealthProperties.@Nullable FailurePercentage> FAILURE_PERCENTAGE = Layers
		.in(PASSIVE, Passive::failurePercentage);

	private static final Function<ServiceProperties, @Nullable String> TRUSTED_CA = Layers.in(ServiceProperties::tls,
			TlsProperties::trustedCa);

	private SettingsMapper() {
	}

	/**
	 * Maps bound properties to runtime settings.
	 * @param properties the properties as written
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the property when a
	 * trusted CA bundle cannot be read, a split has no positive weight, targets another
	 * split, or shares its name with a service entry
	 */
	static GatewayLbSettings map(GatewayLbProperties properties) {
		return map(properties, null);
	}

	/**
	 * Maps bound properties to runtime settings, with the gateway's zone.
	 * @param properties the properties as written
	 * @param zone the gateway's zone, {@code spring.cloud.loadbalancer.zone}, or
	 * {@code null}
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException as
	 * {@link #map(GatewayLbProperties)}, and naming
	 * {@code spring.cloud.loadbalancer.zone} when a service's endpoints form levels by
	 * zone and the gateway has no zone
	 */
	static GatewayLbSettings map(GatewayLbProperties properties, @Nullable String zone) {
		ServiceSettings defaults = resolve(DEFAULTS_PATH, properties.defaults(), ServiceProperties.NONE, zone);
		Map<String, ServiceSettings> services = new HashMap<>();
		properties.services()
			.forEach((id, service) -> services.put(normalize(id),
					resolve(path("gateway.lb.services", id), service, properties.defaults(), zone)));
		Map<String, SplitSettings> splits = new HashMap<>();
		properties.splits().forEach((name, split) -> splits.put(normalize(name), map(name, split, properties)));
		return new GatewayLbSettings(defaults, services, splits, properties.trustedProxies(), properties,
				FleetSettings.map(properties.fleet()), DnsSettings.map(properties.dns()),
				properties.actuator().allowedHosts());
	}

	/**
	 * Resolves the settings of one service: each key from {@code service} if it sets it,
	 * else from {@code defaults} if it sets it, else its built-in default. A list is one
	 * key, taken whole from the first layer that sets it.
	 * @param path the property path of {@code service}, such as
	 * {@code gateway.lb.services.catalog}, for messages
	 * @param service the keys the service sets
	 * @param defaults the keys {@code gateway.lb.defaults} sets
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the property of the layer
	 * the value came from when {@code tls.trusted-ca} cannot be read or holds no
	 * certificate
	 */
	static ServiceSettings resolve(String path, ServiceProperties service, ServiceProperties defaults) {
		return resolve(path, service, defaults, null);
	}

	static ServiceSettings resolve(String path, ServiceProperties service, ServiceProperties defaults,
			@Nullable String zone) {
		Layers layers = new Layers(path, service, defaults, ServiceSettings.BUILT_IN);
		BalancerSettings balancer = new BalancerSettings(algorithm(layers.get(ServiceProperties::algorithm)),
				layers.get(ServiceProperties::slowStart).toNanos(),
				layers.get(Layers.in(ServiceProperties::peakEwma, PeakEwmaProperties::decay)).toNanos(),
				layers.get(ServiceProperties::hashBalanceFactor), LevelSettings.NONE);
		HealthSettings health = new HealthSettings(
				new OutlierDetection(layers.get(Layers.in(PASSIVE, Passive::consecutiveFailures)),
						layers.get(Layers.in(PASSIVE, Passive::baseEjectionTime)).toNanos(),
						layers.get(Layers.in(PASSIVE, Passive::maxEjectionPercent)),
						FailureStatuses.of(layers.get(Layers.in(PASSIVE, Passive::onStatuses))),
						layers.get(Layers.in(PASSIVE, Passive::latencyFactor)),
						new OutlierDetection.SuccessRate(
								layers.get(Layers.in(SUCCESS_RATE, HealthProperties.SuccessRate::enabled)),
								layers.get(Layers.in(SUCCESS_RATE, HealthProperties.SuccessRate::stdevFactor)),
								layers.get(Layers.in(SUCCESS_RATE, HealthProperties.SuccessRate::minimumHosts)),
								layers.get(Layers.in(SUCCESS_RATE, HealthProperties.SuccessRate::requestVolume)),
								layers.get(Layers.in(SUCCESS_RATE, HealthProperties.SuccessRate::interval)).toNanos(),
								layers.get(Layers.in(SUCCESS_RATE, HealthProperties.SuccessRate::confidence))),
						new OutlierDetection.FailurePercentage(
								layers.get(Layers.in(FAILURE_PERCENTAGE, HealthProperties.FailurePercentage::enabled)),
								layers
									.get(Layers.in(FAILURE_PERCENTAGE, HealthProperties.FailurePercentage::threshold)),
								layers.get(Layers.in(FAILURE_PERCENTAGE,
										HealthProperties.FailurePercentage::minimumHosts)),
								layers.get(Layers.in(FAILURE_PERCENTAGE,
										HealthProperties.FailurePercentage::requestVolume)))),
				new HealthSettings.Active(layers.get(Layers.in(ACTIVE, Active::enabled)),
						layers.get(Layers.in(ACTIVE, Active::path)), layers.get(Layers.in(ACTIVE, Active::interval)),
						layers.get(Layers.in(ACTIVE, Active::timeout))),
				layers.get(Layers.in(ServiceProperties::health, HealthProperties::maxDrainPercent)));
		RetrySettings retry = new RetrySettings(
				layers.get(Layers.in(ServiceProperties::retry, RetryProperties::attempts)),
				Set.copyOf(layers.get(Layers.in(ServiceProperties::retry, RetryProperties::onStatuses))),
				layers.get(Layers.in(ServiceProperties::retry, RetryProperties::budgetPercent)),
				layers.get(Layers.in(ServiceProperties::retry, RetryProperties::budgetMinPerSecond)));
		return ServiceSettings.of(layers, zone, balancer,
				HashKey.parse("hash-key", layers.get(ServiceProperties::hashKey)), upstream(layers), health, retry);
	}

	private static UpstreamSettings upstream(Layers layers) {
		String trustedCa = layers.get(TRUSTED_CA);
		List<X509Certificate> certificates = null;
		if (!trustedCa.isBlank()) {
			try {
				certificates = UpstreamSettings.readCertificates(trustedCa.trim());
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidConfigurationPropertyValueException(layers.pathOf(TRUSTED_CA, "tls.trusted-ca"),
						trustedCa, ex.getMessage());
			}
		}
		boolean h2c = layers
			.get(Layers.in(ServiceProperties::pool, PoolProperties::protocol)) == PoolProperties.Protocol.H2C;
		if (h2c && layers.get(ServiceProperties::http2)) {
			throw new InvalidConfigurationPropertyValueException(
					layers.pathOf(Layers.in(ServiceProperties::pool, PoolProperties::protocol), "pool.protocol"), "h2c",
					"h2c speaks to http endpoints, http2: true to https ones; set one of the two");
		}
		return new UpstreamSettings(layers.get(Layers.in(ServiceProperties::pool, PoolProperties::maxConnections)),
				layers.get(Layers.in(ServiceProperties::pool, PoolProperties::maxPending)),
				layers.get(Layers.in(ServiceProperties::pool, PoolProperties::pendingTimeout)),
				layers.get(Layers.in(ServiceProperties::pool, PoolProperties::maxIdleTime)),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::connect)),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::response)),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::bodyIdle)),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::requestBodyIdle)), certificates,
				layers.get(ServiceProperties::http2),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::responseWriteIdle)),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::requestBodyMinRate)).toBytes(),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::happyEyeballs)),
				layers.get(Layers.in(ServiceProperties::pool, PoolProperties::loopAffinity)) == LoopAffinity.PREFERRED,
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::responseWriteMinRate)).toBytes(),
				layers.get(Layers.in(ServiceProperties::timeouts, TimeoutProperties::maxDuration)), h2c);
	}

	private static SplitSettings map(String name, SplitProperties split, GatewayLbProperties properties) {
		String key = path("gateway.lb.splits", name);
		if (properties.services().keySet().stream().anyMatch(name::equalsIgnoreCase)) {
			throw new InvalidConfigurationPropertyValueException(key, name,
					"a split cannot share its name with an entry of gateway.lb.services");
		}
		List<Split.Target> targets = new ArrayList<>();
		split.targets().forEach((service, weight) -> {
			if (properties.splits().keySet().stream().anyMatch(service::equalsIgnoreCase)) {
				throw new InvalidConfigurationPropertyValueException(key + ".targets." + service, service,
						"a split cannot target another split");
			}
			targets.add(new Split.Target(service, weight));
		});
		Split compiled;
		try {
			compiled = Split.of(name, targets);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException(key + ".targets", split.targets(),
					"expected: targets whose weights sum to more than 0");
		}
		StickyProperties sticky = split.sticky();
		CookieSettings cookie = (sticky != null) ? new CookieSettings(sticky.cookie(), sticky.maxAge(), sticky.path(),
				sticky.secure(), sticky.httpOnly(), CookieSettings.sameSite(sticky.sameSite())) : null;
		RolloutPlan rollout = rollout(key + ".rollout", split, compiled);
		return new SplitSettings(compiled, cookie, split.overrideHeader(), split.overrideTrustedClients(), rollout);
	}

	/**
	 * Maps a split's rollout, each key not set taken from the built-in defaults, or
	 * rejects it naming the key and its value.
	 */
	private static @Nullable RolloutPlan rollout(String key, SplitProperties split, Split compiled) {
		RolloutProperties rollout = split.rollout();
		if (rollout == null) {
			return null;
		}
		String target = rollout.target();
		int index = (target != null) ? compiled.indexOf(target) : -1;
		if (target == null || index < 0) {
			throw new InvalidConfigurationPropertyValueException(key + ".target", target,
					"expected: one of the split's targets " + split.targets().keySet());
		}
		if (compiled.targets().stream().mapToInt(Split.Target::weight).sum() == compiled.targets()
			.get(index)
			.weight()) {
			throw new InvalidConfigurationPropertyValueException(key + ".target", target,
					"expected: a target whose split has other targets with weights above 0, to share the rest");
		}
		String id = rollout.id();
		if (id != null && !RolloutPlan.isValidId(id)) {
			throw new InvalidConfigurationPropertyValueException(key + ".id", id,
					"expected: 1 to " + RolloutPlan.MAX_ID_LENGTH + " letters, digits, '.', '_' or '-'");
		}
		// The plan's exception does not say which key it rejects. So each key set is
		// first tried alone over the built-in defaults, which are valid: a plan that
		// fails then fails for that key. In the plan's own order, so that the key named
		// is the one the plan would reject first.
		for (RolloutKey<?> rolloutKey : RolloutKey.ALL) {
			Object value = rolloutKey.accessor().apply(rollout);
			if (value != null) {
				try {
					plan(target, rollout, rolloutKey::equals);
				}
				catch (IllegalArgumentException ex) {
					throw new InvalidConfigurationPropertyValueException(key + "." + rolloutKey.name(), value,
							ex.getMessage());
				}
			}
		}
		try {
			return plan(target, rollout, (rolloutKey) -> true);
		}
		catch (IllegalArgumentException ex) {
			// A rule across keys, which no key breaks alone: name the block.
			throw new InvalidConfigurationPropertyValueException(key, rollout, ex.getMessage());
		}
	}

	/**
	 * Builds the plan of a rollout from the keys it sets that {@code taken} accepts, and
	 * the built-in defaults for the others.
	 */
	private static RolloutPlan plan(String target, RolloutProperties rollout, Predicate<RolloutKey<?>> taken) {
		return new RolloutPlan(normalize(target),
				RolloutKey.STEPS.from(rollout, taken).stream().mapToInt(Integer::intValue).toArray(),
				saturatedNanos(RolloutKey.INTERVAL.from(rollout, taken)), RolloutKey.MIN_REQUESTS.from(rollout, taken),
				RolloutKey.MAX_ERROR_RATE_INCREASE.from(rollout, taken),
				RolloutKey.MAX_LATENCY_RATIO.from(rollout, taken), rollout.id(),
				RolloutKey.ERROR_STATUSES.from(rollout, taken).stream().mapToInt(Integer::intValue).toArray(),
				RolloutKey.MAX_OUTCOMES_PER_CLIENT.from(rollout, taken), RolloutKey.MIN_CLIENTS.from(rollout, taken),
				RolloutKey.SHADOW.from(rollout, taken), RolloutKey.MAX_MISMATCH_RATE.from(rollout, taken));
	}

	/**
	 * Returns a duration in nanoseconds, {@link Long#MAX_VALUE} (or {@code MIN_VALUE})
	 * for one past 292 years, where {@link Duration#toNanos()} throws: the plan then
	 * rejects it naming the key, as any interval above its bound.
	 */
	private static long saturatedNanos(Duration duration) {
		try {
			return duration.toNanos();
		}
		catch (ArithmeticException ex) {
			return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
		}
	}

	static Algorithm algorithm(BalancingAlgorithm algorithm) {
		return switch (algorithm) {
			case ROUND_ROBIN -> Algorithm.ROUND_ROBIN;
			case LEAST_REQUESTS -> Algorithm.LEAST_REQUESTS;
			case POWER_OF_TWO_CHOICES -> Algorithm.POWER_OF_TWO_CHOICES;
			case CONSISTENT_HASH -> Algorithm.CONSISTENT_HASH;
			case PEAK_EWMA -> Algorithm.PEAK_EWMA;
		};
	}

	static String normalize(String serviceId) {
		// Returns the same instance when already lower case: no allocation per pick.
		return serviceId.toLowerCase(Locale.ROOT);
	}

	/**
	 * Returns the property path of a map entry the way Boot prints it: a key with a dot
	 * in brackets, as a dot would otherwise read as nesting.
	 */
	private static String path(String map, String key) {
		return (key.indexOf('.') >= 0) ? map + "[" + key + "]" : map + "." + key;
	}

	/**
	 * A key of a split's {@code rollout} block that has a built-in default.
	 *
	 * @param name the key's name in the {@code rollout} block
	 * @param accessor the key's accessor
	 */
	private record RolloutKey<T>(String name, Function<RolloutProperties, @Nullable T> accessor) {

		static final RolloutKey<List<Integer>> STEPS = new RolloutKey<>("steps", RolloutProperties::steps);

		static final RolloutKey<Duration> INTERVAL = new RolloutKey<>("interval", RolloutProperties::interval);

		static final RolloutKey<Long> MIN_REQUESTS = new RolloutKey<>("min-requests", RolloutProperties::minRequests);

		static final RolloutKey<Double> MAX_ERROR_RATE_INCREASE = new RolloutKey<>("max-error-rate-increase",
				RolloutProperties::maxErrorRateIncrease);

		static final RolloutKey<Double> MAX_LATENCY_RATIO = new RolloutKey<>("max-latency-ratio",
				RolloutProperties::maxLatencyRatio);

		static final RolloutKey<List<Integer>> ERROR_STATUSES = new RolloutKey<>("error-statuses",
				RolloutProperties::errorStatuses);

		static final RolloutKey<Integer> MAX_OUTCOMES_PER_CLIENT = new RolloutKey<>("max-outcomes-per-client",
				RolloutProperties::maxOutcomesPerClient);

		static final RolloutKey<Integer> MIN_CLIENTS = new RolloutKey<>("min-clients", RolloutProperties::minClients);

		static final RolloutKey<Boolean> SHADOW = new RolloutKey<>("shadow", RolloutProperties::shadow);

		static final RolloutKey<Double> MAX_MISMATCH_RATE = new RolloutKey<>("max-mismatch-rate",
				RolloutProperties::maxMismatchRate);

		/**
		 * The keys in the order the plan checks them.
		 */
		static final List<RolloutKey<?>> ALL = List.of(STEPS, INTERVAL, MIN_REQUESTS, MAX_ERROR_RATE_INCREASE,
				MAX_LATENCY_RATIO, ERROR_STATUSES, MAX_OUTCOMES_PER_CLIENT, MIN_CLIENTS, SHADOW, MAX_MISMATCH_RATE);

		/**
		 * Returns the key's value in {@code rollout} if it sets it and {@code taken}
		 * accepts the key, else its built-in default.
		 */
		T from(RolloutProperties rollout, Predicate<RolloutKey<?>> taken) {
			T value = taken.test(this) ? this.accessor.apply(rollout) : null;
			return Objects.requireNonNull((value != null) ? value : this.accessor.apply(BuiltInDefaults.ROLLOUT),
					"a key without a built-in default");
		}

	}

}
