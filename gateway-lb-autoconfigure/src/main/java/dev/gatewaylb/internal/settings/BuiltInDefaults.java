package dev.gatewaylb.internal.settings;

import java.time.Duration;
import java.util.List;

import dev.gatewaylb.config.BalancingAlgorithm;
import dev.gatewaylb.config.HealthProperties.Active;
import dev.gatewaylb.config.HealthProperties.FailurePercentage;
import dev.gatewaylb.config.HealthProperties.Passive;
import dev.gatewaylb.config.HealthProperties.SuccessRate;
import dev.gatewaylb.config.HealthProperties;
import dev.gatewaylb.config.LoopAffinity;
import dev.gatewaylb.config.PeakEwmaProperties;
import dev.gatewaylb.config.PoolProperties;
import dev.gatewaylb.config.RetryProperties;
import dev.gatewaylb.config.RolloutProperties;
import dev.gatewaylb.config.TimeoutProperties;
import dev.gatewaylb.config.TlsProperties;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.rollout.RolloutPlan;

import org.springframework.util.unit.DataSize;

/**
 * The value of every key that the configuration does not set: the one table of the
 * built-in defaults, written in the binding records' own shape, so that the mapper takes
 * a key from it exactly as from a layer the user wrote. The blocks of the core are here;
 * each feature's block is its feature's ({@code BUILT_IN} beside its settings), and
 * {@link ServiceSettings#BUILT_IN} puts them together. The configuration metadata (for
 * the keys under {@code defaults}) and the tables of {@code docs/configuration.md} and
 * {@code docs/rollouts.md} show the same values; {@code BuiltInDefaultsTests} keeps them
 * equal.
 */
final class BuiltInDefaults {

	static final BalancingAlgorithm ALGORITHM = BalancingAlgorithm.ROUND_ROBIN;

	static final String HASH_KEY = HashKey.CLIENT_IP.toString();

	static final PeakEwmaProperties PEAK_EWMA = new PeakEwmaProperties(Duration.ofSeconds(10));

	static final PoolProperties POOL = new PoolProperties(256, 256, Duration.ofSeconds(5), Duration.ofSeconds(30),
			LoopAffinity.PREFERRED, PoolProperties.Protocol.HTTP1);

	static final TimeoutProperties TIMEOUTS = new TimeoutProperties(Duration.ofSeconds(5), Duration.ofSeconds(30),
			Duration.ZERO, Duration.ofSeconds(60), Duration.ofSeconds(60), DataSize.ofKilobytes(1),
			Duration.ofMillis(250), DataSize.ofKilobytes(1), Duration.ZERO);

	static final TlsProperties TLS = new TlsProperties("");

	static final HealthProperties HEALTH = new HealthProperties(
			new Passive(5, Duration.ofSeconds(30), 50, List.of(), 0.0,
					new SuccessRate(false, 1.9, 5, 100, Duration.ofSeconds(10), 0.999),
					new FailurePercentage(false, 85, 5, 50)),
			new Active(false, "/actuator/health", Duration.ofSeconds(10), Duration.ofSeconds(2)), 50);

	static final RetryProperties RETRY = new RetryProperties(1, List.of(502, 503, 504), 20, 10);

	/**
	 * Every key of a split's {@code rollout} block but {@code target}, which has none.
	 */
	static final RolloutProperties ROLLOUT = new RolloutProperties(null, List.of(5, 25, 50, 100), Duration.ofMinutes(5),
			100L, 0.01, 1.5, null, List.of(), RolloutPlan.DEFAULT_MAX_OUTCOMES_PER_CLIENT,
			RolloutPlan.DEFAULT_MIN_CLIENTS, false, RolloutPlan.DEFAULT_MAX_MISMATCH_RATE);

	private BuiltInDefaults() {
	}

}
