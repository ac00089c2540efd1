package dev.gatewaylb.internal.settings;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LiveSettingsTests {

	private final List<GatewayLbSettings> notified = new ArrayList<>();

	@Test
	void putsDifferentSettingsInForceAndTellsTheListeners() {
		LiveSettings live = live(Map.of());
		GatewayLbSettings next = GatewayLbSettingsTests.bind(Map.of("gateway.lb.defaults.slow-start", "5s"));
		assertThat(live.apply(next)).isTrue();
		assertThat(live.get()).isSameAs(next);
		assertThat(live.generation()).isEqualTo(2);
		assertThat(live.appliedRefreshes()).isOne();
		assertThat(this.notified).last().isSameAs(next);
	}

	@Test
	void changesNothingWhenTheSettingsEqualThoseInForce() {
		LiveSettings live = live(Map.of("gateway.lb.defaults.slow-start", "5s"));
		GatewayLbSettings inForce = live.get();
		int notifications = this.notified.size();
		assertThat(live.apply(GatewayLbSettingsTests.bind(Map.of("gateway.lb.defaults.slow-start", "5s")))).isFalse();
		assertThat(live.get()).isSameAs(inForce);
		assertThat(live.generation()).isOne();
		assertThat(live.appliedRefreshes()).isZero();
		assertThat(this.notified).hasSize(notifications);
	}

	@Test
	void clearsTheLastErrorOnAValidRefreshThatChangesNothing() {
		LiveSettings live = live(Map.of());
		live.reject("gateway.lb.defaults.algorithm: fastest");
		assertThat(live.apply(GatewayLbSettingsTests.bind(Map.of()))).isFalse();
		assertThat(live.lastError()).isNull();
		assertThat(live.generation()).isOne();
		assertThat(live.rejectedRefreshes()).isOne();
	}

	@Test
	void showsThePropertiesOfTheLastBindingNotRejected() {
		LiveSettings live = live(Map.of("gateway.lb.services.catalog.slow-start", "5s"));
		assertThat(live.properties().services()).containsOnlyKeys("catalog");
		GatewayLbSettings respelled = GatewayLbSettingsTests
			.bind(Map.of("gateway.lb.services.CATALOG.slow-start", "5s"));
		assertThat(live.apply(respelled)).isFalse();
		assertThat(live.properties()).isSameAs(respelled.properties());
		live.reject("gateway.lb.defaults.algorithm: fastest");
		assertThat(live.properties()).isSameAs(respelled.properties());
		GatewayLbSettings next = GatewayLbSettingsTests.bind(Map.of("gateway.lb.services.catalog.slow-start", "10s"));
		assertThat(live.apply(next)).isTrue();
		assertThat(live.properties()).isSameAs(next.properties());
	}

	private LiveSettings live(Map<String, Object> properties) {
		LiveSettings live = new LiveSettings(GatewayLbSettingsTests.bind(properties));
		live.onApply(this.notified::add);
		return live;
	}

}
