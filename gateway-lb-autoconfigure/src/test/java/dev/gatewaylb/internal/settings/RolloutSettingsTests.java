package dev.gatewaylb.internal.settings;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import dev.gatewaylb.config.GatewayLbProperties;
import dev.gatewaylb.internal.rollout.RolloutPlan;
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
 * A split's {@code rollout} block, mapped with its defaults or rejected naming the key.
 */
class RolloutSettingsTests {

	private static final String SPLIT = "gateway.lb.splits.shop.";

	@Test
	void fillsInTheDefaultsOfTheKeysNotSet() {
		SplitSettings split = map(Map.of(SPLIT + "rollout.target", "Shop-Canary"));
		assertThat(split.rollout()).isEqualTo(new RolloutPlan("shop-canary", new int[] { 5, 25, 50, 100 },
				Duration.ofMinutes(5).toNanos(), 100, 0.01, 1.5, null, null, 10, 20));
	}

	@Test
	void takesEveryKeySet() {
		SplitSettings split = map(Map.of(SPLIT + "rollout.target", "shop-canary", SPLIT + "rollout.steps", "10,100",
				SPLIT + "rollout.interval", "5s", SPLIT + "rollout.min-requests", "20",
				SPLIT + "rollout.max-error-rate-increase", "0.05", SPLIT + "rollout.max-latency-ratio", "2",
				SPLIT + "rollout.max-outcomes-per-client", "0", SPLIT + "rollout.min-clients", "3"));
		assertThat(split.rollout()).isEqualTo(new RolloutPlan("shop-canary", new int[] { 10, 100 },
				Duration.ofSeconds(5).toNanos(), 20, 0.05, 2.0, null, null, 0, 3));
		assertThat(split.rollout().fingerprint()).as("keys set away from their defaults").endsWith(" clients 0/3");
	}

	@Test
	void takesTheIdGivenAndOtherwiseDerivesOne() {
		SplitSettings given = map(
				Map.of(SPLIT + "rollout.target", "shop-canary", SPLIT + "rollout.id", "shop-2026.12"));
		SplitSettings derived = map(Map.of(SPLIT + "rollout.target", "shop-canary"));
		assertThat(given.rollout().id()).isEqualTo("shop-2026.12");
		assertThat(derived.rollout().id()).isEqualTo(new RolloutPlan("shop-canary", new int[] { 5, 25, 50, 100 },
				Duration.ofMinutes(5).toNanos(), 100, 0.01, 1.5, null, null, 10, 20)
			.id());
		// The id and the fingerprint a block without the client keys had before they
		// existed: replicas upgraded one by one still recognise each other's rollout.
		assertThat(derived.rollout().id()).isEqualTo("124308e79d82e172");
		assertThat(derived.rollout().fingerprint())
			.isEqualTo(derived.rollout().id() + " shop-canary [5, 25, 50, 100] 300000000000ns 100 0.01 1.5");
		assertThat(given.rollout().fingerprint()).startsWith("shop-2026.12 ");
	}

	@Test
	void errorStatusesDefaultToEvery5xxAndMayNameA4xx() {
		RolloutPlan every5xx = map(Map.of(SPLIT + "rollout.target", "shop-canary")).rollout();
		assertThat(every5xx.isError(500)).isTrue();
		assertThat(every5xx.isError(503)).isTrue();
		assertThat(every5xx.isError(401)).isFalse();
		RolloutPlan listed = map(
				Map.of(SPLIT + "rollout.target", "shop-canary", SPLIT + "rollout.error-statuses", "503,401,401"))
			.rollout();
		assertThat(listed.errorStatuses()).containsExactly(401, 503);
		assertThat(listed.isError(401)).isTrue();
		assertThat(listed.isError(500)).as("not listed").isFalse();
		assertThat(listed.id()).as("another block, another epoch").isNotEqualTo(every5xx.id());
		assertThat(listed.fingerprint()).endsWith(" errors [401, 503]");
	}

	@Test
	void aSplitWithoutARolloutHasNone() {
		assertThat(map(Map.of()).rollout()).isNull();
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|',
			textBlock = """
					rollout.target            | shop-beta   | gateway.lb.splits.shop.rollout.target            | shop-beta   | expected: one of the split's targets
					rollout.target            | shop-stable | gateway.lb.splits.shop.rollout.target            | shop-stable | expected: a target whose split has other targets with weights above 0
					rollout.steps             | 25,5        | gateway.lb.splits.shop.rollout.steps             | [25, 5]     | steps: [25, 5] (expected: increasing percents)
					rollout.steps             | 50,150      | gateway.lb.splits.shop.rollout.steps             | [50, 150]   | steps: [50, 150] (expected: percents from 1 to 100)
					rollout.interval          | 500ms       | gateway.lb.splits.shop.rollout.interval          | PT0.5S      | interval: 500ms (expected: 1s to 7d)
					rollout.interval          | 604801s     | gateway.lb.splits.shop.rollout.interval          | PT168H1S    | interval: 604801s (expected: 1s to 7d)
					rollout.interval          | 1000000000d | gateway.lb.splits.shop.rollout.interval          | PT24000000000H | interval: 9223372036854775807ns (expected: 1s to 7d)
					rollout.min-requests      | -1          | gateway.lb.splits.shop.rollout.min-requests      | -1          | min-requests: -1 (expected: 0 to 1000000000)
					rollout.min-requests      | 1000000001  | gateway.lb.splits.shop.rollout.min-requests      | 1000000001  | min-requests: 1000000001 (expected: 0 to 1000000000)
					rollout.max-error-rate-increase | 1.5   | gateway.lb.splits.shop.rollout.max-error-rate-increase | 1.5   | max-error-rate-increase: 1.5 (expected: 0 to 1)
					rollout.max-latency-ratio | 0.5         | gateway.lb.splits.shop.rollout.max-latency-ratio | 0.5         | max-latency-ratio: 0.5 (expected: 1 to 1000)
					rollout.max-latency-ratio | 1000.5      | gateway.lb.splits.shop.rollout.max-latency-ratio | 1000.5      | max-latency-ratio: 1000.5 (expected: 1 to 1000)
										rollout.error-statuses    | 500,399     | gateway.lb.splits.shop.rollout.error-statuses    | [500, 399]  | error-statuses: 399 (expected: 400 to 599)
					rollout.max-outcomes-per-client | -1    | gateway.lb.splits.shop.rollout.max-outcomes-per-client | -1    | max-outcomes-per-client: -1 (expected: 0 for no limit
					rollout.max-outcomes-per-client | 1000001 | gateway.lb.splits.shop.rollout.max-outcomes-per-client | 1000001 | max-outcomes-per-client: 1000001 (expected: 0 for no limit, up to 1000000)
					rollout.min-clients       | 1001        | gateway.lb.splits.shop.rollout.min-clients       | 1001        | min-clients: 1001 (expected: 0 to 1000)
					rollout.id                | 'shop 2'    | gateway.lb.splits.shop.rollout.id                | shop 2      | expected: 1 to 64 letters, digits
					""")
	void rejectsAnInvalidRolloutNamingThePropertyAndItsValue(String key, String value, String property, String bound,
			String reason) {
		Map<String, String> values = new HashMap<>();
		values.put(SPLIT + "rollout.target", "shop-canary");
		values.put(SPLIT + key, value);
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class).isThrownBy(() -> map(values))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo(property);
				assertThat(ex.getValue()).hasToString(bound);
				assertThat(ex.getReason()).startsWith(reason);
			});
	}

	@Test
	void namesTheFirstInvalidKeyInTheOrderThePlanChecksThem() {
		Map<String, String> values = new HashMap<>(Map.of(SPLIT + "rollout.target", "shop-canary",
				SPLIT + "rollout.max-latency-ratio", "0.5", SPLIT + "rollout.interval", "0s"));
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class).isThrownBy(() -> map(values))
			.satisfies((ex) -> assertThat(ex.getName()).isEqualTo(SPLIT + "rollout.interval"));
	}

	private static SplitSettings map(Map<String, String> rollout) {
		Map<String, String> values = new HashMap<>(rollout);
		values.put(SPLIT + "targets.shop-stable", "100");
		values.put(SPLIT + "targets.shop-canary", "0");
		GatewayLbProperties properties = new Binder(new MapConfigurationPropertySource(values))
			.bindOrCreate("gateway.lb", Bindable.of(GatewayLbProperties.class));
		return SettingsMapper.map(properties).split("shop");
	}

}
