package dev.gatewaylb.internal.settings;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.config.GatewayLbProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code gateway.lb.fleet}: its defaults, and the name and secret checked at bind time,
 * the secret never echoed.
 */
class FleetSettingsTests {

	@Test
	void defaultsToTheApplicationsNameUnsignedFollowingEverything() {
		FleetSettings fleet = map(Map.of());
		assertThat(fleet).isEqualTo(new FleetSettings(null, null, true, true, List.of()));
		assertThat(fleet.name("edge-gateway")).isEqualTo("edge-gateway");
	}

	@Test
	void takesEveryKeySetAndNeverShowsTheSecret() {
		String secret = "correct horse battery staple, 32+";
		FleetSettings fleet = map(Map.of("gateway.lb.fleet.name", "edge", "gateway.lb.fleet.secret", secret,
				"gateway.lb.fleet.follow-drains", "false", "gateway.lb.fleet.follow-rollouts", "false"));
		assertThat(fleet).isEqualTo(new FleetSettings("edge", secret, false, false, List.of()));
		assertThat(fleet.name("edge-gateway")).isEqualTo("edge");
		assertThat(fleet.toString()).doesNotContain(secret);
	}

	@Test
	void rejectsAShortSecretNamingThePropertyButNotTheValue() {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> map(Map.of("gateway.lb.fleet.secret", "hunter2")))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo("gateway.lb.fleet.secret");
				assertThat(ex.getMessage()).doesNotContain("hunter2").contains("at least 32 bytes");
			});
	}

	@Test
	void takesPreviousSecretsWithASecretOnlyAndNeverShowsThem() {
		String secret = "correct horse battery staple, 32+";
		String previous = "the previous secret of 32 bytes!";
		FleetSettings fleet = map(
				Map.of("gateway.lb.fleet.secret", secret, "gateway.lb.fleet.previous-secrets[0]", previous));
		assertThat(fleet.previousSecrets()).containsExactly(previous);
		assertThat(fleet.toString()).doesNotContain(previous).doesNotContain(secret);
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> map(Map.of("gateway.lb.fleet.previous-secrets[0]", previous)))
			.satisfies((ex) -> assertThat(ex.getName()).isEqualTo("gateway.lb.fleet.previous-secrets"));
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class).isThrownBy(
				() -> map(Map.of("gateway.lb.fleet.secret", secret, "gateway.lb.fleet.previous-secrets[0]", "hunter2")))
			.satisfies((ex) -> {
				assertThat(ex.getName()).isEqualTo("gateway.lb.fleet.previous-secrets[0]");
				assertThat(ex.getMessage()).doesNotContain("hunter2");
			});
	}

	@Test
	void namesTheStartUpKeysARefreshWouldChangeButNotTheSecrets() {
		String secret = "correct horse battery staple, 32+";
		GatewayLbSettings before = settings(Map.of("gateway.lb.fleet.secret", secret));
		assertThat(before.startUpKeysChangedIn(settings(
				Map.of("gateway.lb.fleet.secret", "x".repeat(32), "gateway.lb.fleet.previous-secrets[0]", secret))))
			.as("a rotation")
			.isEmpty();
		assertThat(before.startUpKeysChangedIn(settings(Map.of("gateway.lb.fleet.secret", secret,
				"gateway.lb.fleet.name", "edge", "gateway.lb.fleet.follow-drains", "false", "gateway.lb.dns.max-ttl",
				"60s", "gateway.lb.dns.servers[0]", "10.0.0.2:53"))))
			.containsExactly("gateway.lb.fleet.name", "gateway.lb.fleet.follow-drains", "gateway.lb.dns.max-ttl",
					"gateway.lb.dns.servers");
		assertThat(before).as("a new secret is a change to apply")
			.isNotEqualTo(settings(Map.of("gateway.lb.fleet.secret", "x".repeat(32))));
	}

	@Test
	void rejectsANameWithSpacesOrControlCharacters() {
		for (String name : new String[] { "edge gateways", "edge\ngateways", "x".repeat(257) }) {
			assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
				.isThrownBy(() -> map(Map.of("gateway.lb.fleet.name", name)))
				.satisfies((ex) -> assertThat(ex.getName()).isEqualTo("gateway.lb.fleet.name"));
		}
	}

	private static FleetSettings map(Map<String, String> values) {
		return settings(values).fleet();
	}

	private static GatewayLbSettings settings(Map<String, String> values) {
		GatewayLbProperties properties = new Binder(new MapConfigurationPropertySource(new HashMap<>(values)))
			.bindOrCreate("gateway.lb", Bindable.of(GatewayLbProperties.class));
		return SettingsMapper.map(properties);
	}

}
