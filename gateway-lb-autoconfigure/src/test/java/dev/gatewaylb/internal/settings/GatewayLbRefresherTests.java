package dev.gatewaylb.internal.settings;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class GatewayLbRefresherTests {

	private final Map<String, Object> properties = new HashMap<>(Map.of("gateway.lb.services.catalog.algorithm",
			"least-requests", "gateway.lb.defaults.tls.trusted-ca", "classpath:tls/ca.pem"));

	private final StandardEnvironment environment = new StandardEnvironment();

	private final LiveSettings settings;

	private final GatewayLbRefresher refresher;

	private final AtomicInteger notifications = new AtomicInteger();

	GatewayLbRefresherTests() {
		this.environment.getPropertySources().addFirst(new MapPropertySource("test", this.properties));
		this.settings = new LiveSettings(GatewayLbSettings.bind(this.environment));
		this.settings.onApply((applied) -> this.notifications.incrementAndGet());
		this.refresher = new GatewayLbRefresher(this.environment, this.settings);
	}

	@Test
	void leavesTheSettingsAndTheirGenerationAloneOnARefreshThatChangesNothing() {
		GatewayLbSettings inForce = this.settings.get();
		assertThat(this.refresher.refresh()).isTrue();
		assertThat(this.settings.get()).isSameAs(inForce);
		assertThat(this.settings.generation()).isOne();
		assertThat(this.settings.appliedRefreshes()).isZero();
		assertThat(this.notifications).hasValue(1);
	}

	@Test
	void appliesARefreshThatChangesAValue() {
		this.properties.put("gateway.lb.services.catalog.slow-start", "10s");
		assertThat(this.refresher.refresh()).isTrue();
		assertThat(this.settings.generation()).isEqualTo(2);
		assertThat(this.settings.get().forService("catalog").balancer().slowStartNanos()).isEqualTo(10_000_000_000L);
		assertThat(this.notifications).hasValue(2);
	}

	@Test
	void rejectsARefreshWithAnInvalidSimpleDiscoveryWeightLikeStartUp() {
		this.properties.put("spring.cloud.discovery.client.simple.instances.catalog[0].uri", "http://127.0.0.1:1");
		this.properties.put("spring.cloud.discovery.client.simple.instances.catalog[0].metadata.weight", "heavy");
		assertThat(this.refresher.refresh()).isFalse();
		assertThat(this.settings.generation()).isOne();
		assertThat(this.settings.lastError())
			.contains("spring.cloud.discovery.client.simple.instances.catalog[0].metadata.weight")
			.contains("heavy");
	}

	@Test
	void rejectsARefreshWhoseServiceSetsAnUnreadableTrustedCaNamingTheService() {
		this.properties.put("gateway.lb.services.catalog.tls.trusted-ca", "classpath:tls/missing.pem");
		assertThat(this.refresher.refresh()).isFalse();
		assertThat(this.settings.lastError()).contains("gateway.lb.services.catalog.tls.trusted-ca")
			.contains("classpath:tls/missing.pem");
	}

	@Test
	void refusesARefreshThatChangesAKeyReadAtStartUpNamingItAndAppliesANewFleetSecret() {
		this.properties.put("gateway.lb.dns.max-ttl", "60s");
		this.properties.put("gateway.lb.fleet.name", "edge");
		assertThat(this.refresher.refresh()).isFalse();
		assertThat(this.settings.generation()).isOne();
		assertThat(this.settings.lastError())
			.startsWith("gateway.lb.fleet.name, gateway.lb.dns.max-ttl: read at start-up only");
		assertThat(this.settings.get().dns().maxTtl()).hasSeconds(30);
		this.properties.remove("gateway.lb.dns.max-ttl");
		this.properties.remove("gateway.lb.fleet.name");
		this.properties.put("gateway.lb.fleet.secret", "a fleet secret of at least 32 bytes");
		assertThat(this.refresher.refresh()).isTrue();
		assertThat(this.settings.generation()).as("applied, not unchanged").isEqualTo(2);
		assertThat(this.settings.get().fleet().secret()).isEqualTo("a fleet secret of at least 32 bytes");
		assertThat(this.settings.lastError()).isNull();
	}

}
