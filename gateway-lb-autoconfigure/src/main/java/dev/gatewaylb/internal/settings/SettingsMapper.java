package dev.gatewaylb.internal.settings;

import java.nio.charset.StandardCharsets;
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

import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Locality;
import dev.gatewaylb.config.AffinityProperties;
import dev.gatewaylb.config.BalancingAlgorithm;
import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.config.HealthProperties;
import dev.gatewaylb.config.HealthProperties.Active;
import dev.gatewaylb.config.HealthProperties.Passive;
import dev.gatewaylb.config.ConcurrencyProperties;
import dev.gatewaylb.config.HedgeProperties;
import dev.gatewaylb.config.LocalityProperties;
import dev.gatewaylb.config.MirrorProperties;
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
import dev.gatewaylb.internal.overload.core.ConcurrencyLimits;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.rollout.Rollout;
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

	static final String DEFAULTS_PATH = "gateway.lb.defaults";

	private static final Function<ServiceProperties, @Nullable PoolProperties> POOL = ServiceProperties::pool;

	private static final Function<ServiceProperties, @Nullable TimeoutProperties> TIMEOUTS = ServiceProperties::timeouts;

	private static final Function<ServiceProperties, @Nullable RetryProperties> RETRY = ServiceProperties::retry;

	private static final Function<ServiceProperties, @Nullable HedgeProperties> HEDGE = ServiceProperties::hedge;

	private static final Function<ServiceProperties, @Nullable ConcurrencyProperties> CONCURRENCY = ServiceProperties::concurrency;

	private static final Function<ServiceProperties, @Nullable AffinityProperties> AFFINITY = ServiceProperties::affinity;

	private static final Function<ServiceProperties, @Nullable LocalityProperties> LOCALITY = ServiceProperties::locality;

	private static final Function<ServiceProperties, @Nullable MirrorProperties> MIRROR = ServiceProperties::mirror;

	/**
	 * Spring Cloud LoadBalancer's property for the zone the application runs in, which
	 * localities take as the gateway's zone.
	 */
	static final String ZONE_PROPERTY = "spring.cloud.loadbalancer.zone";

	private static final Function<ServiceProperties, @Nullable Passive> PASSIVE = in(ServiceProperties::health,
			HealthProperties::passive);

	private static final Function<ServiceProperties, @Nullable Active> ACTIVE = in(ServiceProperties::health,
			HealthProperties::active);

	private static final Function<ServiceProperties, HealthProperties.@Nullable SuccessRate> SUCCESS_RATE = in(PASSIVE,
			Passive::successRate);

	private static final Function<ServiceProperties, HealthProperties.@Nullable FailurePercentage> FAILURE_PERCENTAGE = in(
			PASSIVE, Passive::failurePercentage);

	private static final Function<ServiceProperties, @Nullable String> TRUSTED_CA = in(ServiceProperties::tls,
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
	 * {@code spring.cloud.loadbalancer.zone} when a service enables localities and the
	 * gateway has no zone
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
				FleetSettings.map(properties.fleet()), DnsSettings.map(properties.dns()));
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
		Layers layers = new Layers(path, service, defaults);
		BalancerSettings balancer = new BalancerSettings(algorithm(layers.get(ServiceProperties::algorithm)),
				layers.get(ServiceProperties::slowStart).toNanos(),
				layers.get(in(ServiceProperties::peakEwma, PeakEwmaProperties::decay)).toNanos(),
				layers.get(ServiceProperties::hashBalanceFactor), locality(layers, zone));
		HealthSettings health = new HealthSettings(
				new OutlierDetection(layers.get(in(PASSIVE, Passive::consecutiveFailures)),
						layers.get(in(PASSIVE, Passive::baseEjectionTime)).toNanos(),
						layers.get(in(PASSIVE, Passive::maxEjectionPercent)),
						FailureStatuses.of(layers.get(in(PASSIVE, Passive::onStatuses))),
						layers.get(in(PASSIVE, Passive::latencyFactor)),
						new OutlierDetection.SuccessRate(
								layers.get(in(SUCCESS_RATE, HealthProperties.SuccessRate::enabled)),
								layers.get(in(SUCCESS_RATE, HealthProperties.SuccessRate::stdevFactor)),
								layers.get(in(SUCCESS_RATE, HealthProperties.SuccessRate::minimumHosts)),
								layers.get(in(SUCCESS_RATE, HealthProperties.SuccessRate::requestVolume)),
								layers.get(in(SUCCESS_RATE, HealthProperties.SuccessRate::interval)).toNanos(),
								layers.get(in(SUCCESS_RATE, HealthProperties.SuccessRate::confidence))),
						new OutlierDetection.FailurePercentage(
								layers.get(in(FAILURE_PERCENTAGE, HealthProperties.FailurePercentage::enabled)),
								layers.get(in(FAILURE_PERCENTAGE, HealthProperties.FailurePercentage::threshold)),
								layers.get(in(FAILURE_PERCENTAGE, HealthProperties.FailurePercentage::minimumHosts)),
								layers.get(in(FAILURE_PERCENTAGE, HealthProperties.FailurePercentage::requestVolume)))),
				new HealthSettings.Active(layers.get(in(ACTIVE, Active::enabled)), layers.get(in(ACTIVE, Active::path)),
						layers.get(in(ACTIVE, Active::interval)), layers.get(in(ACTIVE, Active::timeout))),
				layers.get(in(ServiceProperties::health, HealthProperties::maxDrainPercent)));
		RetrySettings retry = new RetrySettings(layers.get(in(RETRY, RetryProperties::attempts)),
				Set.copyOf(layers.get(in(RETRY, RetryProperties::onStatuses))),
				layers.get(in(RETRY, RetryProperties::budgetPercent)),
				layers.get(in(RETRY, RetryProperties::budgetMinPerSecond)));
		HedgeSettings hedge = new HedgeSettings(layers.get(in(HEDGE, HedgeProperties::maxExtraLoad)),
				layers.get(in(HEDGE, HedgeProperties::minDelay)).toNanos(),
				Set.copyOf(layers.get(in(HEDGE, HedgeProperties::methods))));
		return new ServiceSettings(balancer, HashKey.parse("hash-key", layers.get(ServiceProperties::hashKey)),
				upstream(layers), health, retry, hedge, concurrency(layers), affinity(layers), mirror(path, layers));
	}

	private static MirrorSettings mirror(String path, Layers layers) {
		String target = layers.get(in(MIRROR, MirrorProperties::target)).trim();
		if (!target.isEmpty() && path.equals(DEFAULTS_PATH)) {
			// Every service mirrored to one shadow, itself included: never what is meant.
			throw new InvalidConfigurationPropertyValueException(DEFAULTS_PATH + ".mirror.target", target,
					"expected: set per service, under gateway.lb.services.<id>.mirror");
		}
		if (!target.isEmpty() && target.equalsIgnoreCase(serviceOf(path))) {
			throw new InvalidConfigurationPropertyValueException(path + ".mirror.target", target,
					"expected: another service than the one mirrored");
		}
		MirrorSettings.Compare compare = switch (layers.get(in(MIRROR, MirrorProperties::compare))) {
			case NONE -> MirrorSettings.Compare.NONE;
			case STATUS -> MirrorSettings.Compare.STATUS;
			case BODY -> MirrorSettings.Compare.BODY;
		};
		return new MirrorSettings(target.isEmpty() ? null : normalize(target),
				layers.get(in(MIRROR, MirrorProperties::percent)),
				layers.get(in(MIRROR, MirrorProperties::maxConcurrent)),
				layers.get(in(MIRROR, MirrorProperties::maxBody)).toBytes(), compare,
				Set.copyOf(layers.get(in(MIRROR, MirrorProperties::methods))));
	}

	/**
	 * Returns the service id of a service's property path: {@code catalog} of
	 * {@code gateway.lb.services.catalog}, {@code a.b} of
	 * {@code gateway.lb.services[a.b]}.
	 */
	private static String serviceOf(String path) {
		String prefix = "gateway.lb.services";
		if (!path.startsWith(prefix)) {
			return "";
		}
		String rest = path.substring(prefix.length());
		return rest.startsWith("[") ? rest.substring(1, rest.length() - 1) : rest.substring(1);
	}

	private static Locality locality(Layers layers, @Nullable String zone) {
		boolean enabled = layers.get(in(LOCALITY, LocalityProperties::enabled));
		String trimmed = (zone != null && !zone.isBlank()) ? zone.trim() : null;
		if (enabled && trimmed == null) {
			throw new InvalidConfigurationPropertyValueException(ZONE_PROPERTY, "(not set)",
					"expected: the zone the " + "gateway runs in, since "
							+ layers.pathOf(in(LOCALITY, LocalityProperties::enabled), "locality.enabled")
							+ " is true and endpoints in that zone are preferred");
		}
		return new Locality(enabled, trimmed, layers.get(in(LOCALITY, LocalityProperties::overprovisioningFactor)),
				layers.get(in(LOCALITY, LocalityProperties::panicThreshold)),
				layers.get(in(LOCALITY, LocalityProperties::loadAware)));
	}

	private static AffinitySettings affinity(Layers layers) {
		String name = layers.get(in(AFFINITY, AffinityProperties::cookie));
		boolean secure = layers.get(in(AFFINITY, AffinityProperties::secure));
		StickyProperties.SameSite sameSite = layers.get(in(AFFINITY, AffinityProperties::sameSite));
		if (sameSite == StickyProperties.SameSite.NONE && !secure) {
			// Browsers drop a SameSite=None cookie that is not Secure: every request
			// would start a new session.
			throw new InvalidConfigurationPropertyValueException(
					layers.pathOf(in(AFFINITY, AffinityProperties::sameSite), "affinity.same-site"), "None",
					"expected: secure: true with it, browsers drop a SameSite=None cookie without Secure");
		}
		String secret = layers.get(in(AFFINITY, AffinityProperties::secret));
		List<String> previous = layers.get(in(AFFINITY, AffinityProperties::previousSecrets));
		String learn = layers.get(in(AFFINITY, AffinityProperties::learn));
		if (!name.isEmpty()) {
			int bytes = secret.getBytes(StandardCharsets.UTF_8).length;
			// A secret is never in a message: its length is.
			if (bytes < EndpointCookie.MIN_SECRET_BYTES) {
				// Named where it was set, or, when nowhere, where the cookie was.
				throw new InvalidConfigurationPropertyValueException(
						layers.pathOf((layers.isSet(in(AFFINITY, AffinityProperties::secret)))
								? in(AFFINITY, AffinityProperties::secret) : in(AFFINITY, AffinityProperties::cookie),
								"affinity.secret"),
						(bytes == 0) ? "(not set)" : "(hidden, " + bytes + " bytes)",
						"expected: at least " + EndpointCookie.MIN_SECRET_BYTES
								+ " bytes, the same on every replica, when affinity.cookie is set");
			}
			for (int i = 0; i < previous.size(); i++) {
				String old = previous.get(i);
				if (old == null || old.getBytes(StandardCharsets.UTF_8).length < EndpointCookie.MIN_SECRET_BYTES) {
					throw new InvalidConfigurationPropertyValueException(
							layers.pathOf(in(AFFINITY, AffinityProperties::previousSecrets),
									"affinity.previous-secrets") + "[" + i + "]",
							"(hidden)", "expected: at least " + EndpointCookie.MIN_SECRET_BYTES + " bytes");
				}
			}
			if (learn.equals(name)) {
				throw new InvalidConfigurationPropertyValueException(
						layers.pathOf(in(AFFINITY, AffinityProperties::learn), "affinity.learn"), learn,
						"expected: the application's own session cookie, not affinity.cookie");
			}
		}
		SplitSettings.StickyCookie cookie = new SplitSettings.StickyCookie(name,
				layers.get(in(AFFINITY, AffinityProperties::maxAge)),
				layers.get(in(AFFINITY, AffinityProperties::path)), secure,
				layers.get(in(AFFINITY, AffinityProperties::httpOnly)), SplitSettings.StickyCookie.sameSite(sameSite));
		return new AffinitySettings(cookie, secret, previous, learn.isEmpty() ? null : learn);
	}

	private static ConcurrencySettings concurrency(Layers layers) {
		ConcurrencyLimits.Algorithm algorithm = switch (layers.get(in(CONCURRENCY, ConcurrencyProperties::limit))) {
			case NONE -> ConcurrencyLimits.Algorithm.NONE;
			case GRADIENT2 -> ConcurrencyLimits.Algorithm.GRADIENT2;
			case VEGAS -> ConcurrencyLimits.Algorithm.VEGAS;
			case AIMD -> ConcurrencyLimits.Algorithm.AIMD;
			case FIXED -> ConcurrencyLimits.Algorithm.FIXED;
		};
		int initial = layers.get(in(CONCURRENCY, ConcurrencyProperties::initialLimit));
		int min = layers.get(in(CONCURRENCY, ConcurrencyProperties::minLimit));
		int max = layers.get(in(CONCURRENCY, ConcurrencyProperties::maxLimit));
		// Each bound is checked where it is bound; how they stand to each other only
		// once the layers are merged.
		if (max < min) {
			throw new InvalidConfigurationPropertyValueException(
					layers.pathOf(in(CONCURRENCY, ConcurrencyProperties::maxLimit), "concurrency.max-limit"), max,
					"expected: at least concurrency.min-limit, " + min);
		}
		if (initial < min || initial > max) {
			throw new InvalidConfigurationPropertyValueException(
					layers.pathOf(in(CONCURRENCY, ConcurrencyProperties::initialLimit), "concurrency.initial-limit"),
					initial, "expected: from concurrency.min-limit to concurrency.max-limit, " + min + " to " + max);
		}
		String partitionBy = layers.get(in(CONCURRENCY, ConcurrencyProperties::partitionBy)).trim();
		return new ConcurrencySettings(new ConcurrencyLimits(algorithm, initial, min, max),
				partitionBy.isEmpty() ? null : HashKey.parse("partition-by", partitionBy),
				layers.find(in(CONCURRENCY, ConcurrencyProperties::partitions), Map.of()),
				layers.get(in(CONCURRENCY, ConcurrencyProperties::maxWait)));
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
		return new UpstreamSettings(layers.get(in(POOL, PoolProperties::maxConnections)),
				layers.get(in(POOL, PoolProperties::maxPending)), layers.get(in(POOL, PoolProperties::pendingTimeout)),
				layers.get(in(POOL, PoolProperties::maxIdleTime)), layers.get(in(TIMEOUTS, TimeoutProperties::connect)),
				layers.get(in(TIMEOUTS, TimeoutProperties::response)),
				layers.get(in(TIMEOUTS, TimeoutProperties::bodyIdle)),
				layers.get(in(TIMEOUTS, TimeoutProperties::requestBodyIdle)), certificates,
				layers.get(ServiceProperties::http2), layers.get(in(TIMEOUTS, TimeoutProperties::responseWriteIdle)),
				layers.get(in(TIMEOUTS, TimeoutProperties::requestBodyMinRate)).toBytes(),
				layers.get(in(TIMEOUTS, TimeoutProperties::happyEyeballs)));
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
		SplitSettings.StickyCookie cookie = (sticky != null)
				? new SplitSettings.StickyCookie(sticky.cookie(), sticky.maxAge(), sticky.path(), sticky.secure(),
						sticky.httpOnly(), SplitSettings.StickyCookie.sameSite(sticky.sameSite()))
				: null;
		Rollout.Plan rollout = rollout(key + ".rollout", split, compiled);
		return new SplitSettings(compiled, cookie, split.overrideHeader(), split.overrideTrustedClients(), rollout);
	}

	/**
	 * Maps a split's rollout, each key not set taken from the built-in defaults, or
	 * rejects it naming the key and its value.
	 */
	private static Rollout.@Nullable Plan rollout(String key, SplitProperties split, Split compiled) {
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
		if (id != null && !Rollout.Plan.isValidId(id)) {
			throw new InvalidConfigurationPropertyValueException(key + ".id", id,
					"expected: 1 to " + Rollout.Plan.MAX_ID_LENGTH + " letters, digits, '.', '_' or '-'");
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
	private static Rollout.Plan plan(String target, RolloutProperties rollout, Predicate<RolloutKey<?>> taken) {
		return new Rollout.Plan(normalize(target),
				RolloutKey.STEPS.from(rollout, taken).stream().mapToInt(Integer::intValue).toArray(),
				RolloutKey.INTERVAL.from(rollout, taken).toNanos(), RolloutKey.MIN_REQUESTS.from(rollout, taken),
				RolloutKey.MAX_ERROR_RATE_INCREASE.from(rollout, taken),
				RolloutKey.MAX_LATENCY_RATIO.from(rollout, taken), rollout.id(),
				RolloutKey.ERROR_STATUSES.from(rollout, taken).stream().mapToInt(Integer::intValue).toArray(),
				RolloutKey.MAX_OUTCOMES_PER_CLIENT.from(rollout, taken), RolloutKey.MIN_CLIENTS.from(rollout, taken),
				RolloutKey.SHADOW.from(rollout, taken), RolloutKey.MAX_MISMATCH_RATE.from(rollout, taken));
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
	 * Returns a key nested in a group, {@code null} when the layer does not set the
	 * group.
	 */
	private static <G, T> Function<ServiceProperties, @Nullable T> in(Function<ServiceProperties, @Nullable G> group,
			Function<G, @Nullable T> key) {
		return (layer) -> {
			G value = group.apply(layer);
			return (value != null) ? key.apply(value) : null;
		};
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

	/**
	 * The layers a service's keys come from, most specific first; the built-in defaults
	 * come last and set every key.
	 */
	private record Layers(String path, ServiceProperties service, ServiceProperties defaults) {

		<T> T get(Function<ServiceProperties, @Nullable T> key) {
			T value = key.apply(this.service);
			if (value == null) {
				value = key.apply(this.defaults);
			}
			if (value == null) {
				value = key.apply(BuiltInDefaults.SERVICE);
			}
			return Objects.requireNonNull(value, "a key without a built-in default");
		}

		/**
		 * Returns a key's value from the first layer that sets it, for a key whose
		 * built-in default is not a value a binder makes (an empty map).
		 */
		<T> T find(Function<ServiceProperties, @Nullable T> key, T builtIn) {
			T value = key.apply(this.service);
			if (value == null) {
				value = key.apply(this.defaults);
			}
			return (value != null) ? value : builtIn;
		}

		/**
		 * Returns whether the service or the defaults set a key.
		 */
		boolean isSet(Function<ServiceProperties, ?> key) {
			return key.apply(this.service) != null || key.apply(this.defaults) != null;
		}

		/**
		 * Returns the full property path of {@code name} in the layer its value comes
		 * from; the built-in defaults are reported as {@code defaults}, where a user
		 * would change them.
		 */
		String pathOf(Function<ServiceProperties, ?> key, String name) {
			return ((key.apply(this.service) != null) ? this.path : DEFAULTS_PATH) + "." + name;
		}

	}

}
