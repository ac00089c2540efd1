package dev.gatewaylb.internal.settings;

import java.time.Duration;
import java.util.List;

import dev.gatewaylb.config.AffinityProperties;
import dev.gatewaylb.config.BalancingAlgorithm;
import dev.gatewaylb.config.HealthProperties;
import dev.gatewaylb.config.HealthProperties.Active;
import dev.gatewaylb.config.HealthProperties.FailurePercentage;
import dev.gatewaylb.config.HealthProperties.Passive;
import dev.gatewaylb.config.HealthProperties.SuccessRate;
import dev.gatewaylb.config.ConcurrencyLimitAlgorithm;
import dev.gatewaylb.config.ConcurrencyProperties;
import dev.gatewaylb.config.HedgeProperties;
import dev.gatewaylb.config.LocalityProperties;
import dev.gatewaylb.config.MirrorCompare;
import dev.gatewaylb.config.MirrorProperties;
import dev.gatewaylb.config.PeakEwmaProperties;
import dev.gatewaylb.config.PoolProperties;
import dev.gatewaylb.config.RetryProperties;
import dev.gatewaylb.config.RolloutProperties;
import dev.gatewaylb.config.ServiceProperties;
import dev.gatewaylb.config.StickyProperties.SameSite;
import dev.gatewaylb.config.TimeoutProperties;
import dev.gatewaylb.config.TlsProperties;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.rollout.Rollout;

import org.springframework.util.unit.DataSize;

/**
 * The value of every key that the configuration does not set: the one table of the
 * built-in defaults, written in the binding records' own shape, so that the mapper takes
 * a key from it exactly as from a layer the user wrote. The configuration metadata (for
 * the keys under {@code defaults}) and the tables of {@code docs/configuration.md} and
 * {@code docs/rollouts.md} show the same values; {@code BuiltInDefaultsTests} keeps them
 * equal. A map has no entry here ({@code concurrency.partitions}): a binder never binds
 * one empty, and its default, no entries, is the mapper's.
 */
final class BuiltInDefaults {

	/**
	 * Every key of a service, under {@code gateway.lb.defaults} and
	 * {@code gateway.lb.services.<id>}.
	 */
	static final ServiceProperties SERVICE = new ServiceProperties(BalancingAlgorithm.ROUND_ROBIN, Duration.ZERO,
			HashKey.CLIENT_IP.toString(), 0.0, new PeakEwmaProperties(Duration.ofSeconds(10)),
			new PoolProperties(256, 256, Duration.ofSeconds(5), Duration.ofSeconds(30)),
			new TimeoutProperties(Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(60),
					Duration.ofSeconds(60), DataSize.ofKilobytes(1), Duration.ofMillis(250)),
			new TlsProperties(""), false,
			new HealthProperties(
					new Passive(5, Duration.ofSeconds(30), 50, List.of(), 0.0,
							new SuccessRate(false, 1.9, 5, 100, Duration.ofSeconds(10), 0.999),
							new FailurePercentage(false, 85, 5, 50)),
					new Active(false, "/actuator/health", Duration.ofSeconds(10), Duration.ofSeconds(2)), 50),
			new RetryProperties(1, List.of(502, 503, 504), 20, 10),
			new HedgeProperties(0.0, Duration.ofMillis(5), List.of("GET", "HEAD", "OPTIONS")),
			new ConcurrencyProperties(ConcurrencyLimitAlgorithm.NONE, 20, 1, 500, "", null, Duration.ZERO),
			new AffinityProperties("", "", List.of(), "", Duration.ZERO, "/", false, true, SameSite.LAX),
			new LocalityProperties(false, 1.4, 0.5, true),
			new MirrorProperties("", 100, 64, DataSize.ofKilobytes(64), MirrorCompare.STATUS, List.of("GET", "HEAD")));

	/**
	 * Every key of a split's {@code rollout} block but {@code target}, which has none.
	 */
	static final RolloutProperties ROLLOUT = new RolloutProperties(null, List.of(5, 25, 50, 100), Duration.ofMinutes(5),
			100L, 0.01, 1.5, null, List.of(), Rollout.Plan.DEFAULT_MAX_OUTCOMES_PER_CLIENT,
			Rollout.Plan.DEFAULT_MIN_CLIENTS, false, Rollout.Plan.DEFAULT_MAX_MISMATCH_RATE);

	private BuiltInDefaults() {
	}

}
