package dev.gatewaylb.gateway;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code gatewaylb} endpoint exposed on the gateway's port with its default access:
 * anyone may read it, nobody may drain or act on a rollout through it, and a split's
 * override header is not named to an anonymous reader. (With
 * {@code access: unrestricted}, OperationsIT and MembershipIT drain.)
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ActuatorAccessIT extends GatewayIntegrationTest {

	static final List<TestBackend> backends = List.of(TestBackend.start("a"), TestBackend.start("b"));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("guarded")
			.instances("guarded", backends)
			.route("shop")
			.set("gateway.lb.splits.shop.targets.guarded", 1)
			.set("gateway.lb.splits.shop.override-header", "X-Secret-Target")
			.set("gateway.lb.splits.shop.override-trusted-clients[0]", "10.0.0.0/8")
			.set("gateway.lb.splits.ramp.targets.guarded", 100)
			.set("gateway.lb.splits.ramp.targets.ramp-canary", 0)
			.set("gateway.lb.splits.ramp.rollout.target", "ramp-canary")
			.set("gateway.lb.splits.ramp.rollout.interval", "1h")
			.set("management.endpoints.web.exposure.include", "gatewaylb");
	}

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
	}

	@Test
	void refusesDrainByDefaultAndTheEndpointKeepsServing() {
		String b = "127.0.0.1:" + backends.get(1).port();
		GatewayClient.Answer refused = this.client.send("POST", "/actuator/gatewaylb/guarded",
				"{\"endpoint\":\"" + b + "\",\"drain\":true}");
		assertThat(refused.status()).as(refused.body()).isEqualTo(405);
		Map<String, Integer> counts = new HashMap<>();
		for (int i = 0; i < 20; i++) {
			counts.merge(this.client.getNow("/guarded/").backend(), 1, Integer::sum);
		}
		assertThat(counts).containsEntry("a", 10).containsEntry("b", 10);
		assertThat(this.client.getNow("/actuator/gatewaylb/guarded").body()).contains("\"state\":\"healthy\"")
			.doesNotContain("draining");
	}

	@Test
	void refusesRolloutActionsByDefaultAndTheRolloutGoesOn() {
		for (String action : new String[] { "pause", "promote", "roll-back" }) {
			GatewayClient.Answer refused = this.client.send("POST", "/actuator/gatewaylb/ramp",
					"{\"rollout\":\"" + action + "\"}");
			assertThat(refused.status()).as(action + ": " + refused.body()).isEqualTo(405);
		}
		assertThat(this.client.getNow("/actuator/gatewaylb/ramp").body()).contains("\"state\":\"progressing\"",
				"\"percent\":5");
	}

	@Test
	void readsWithoutNamingTheOverrideHeaderToAnAnonymousReader() {
		GatewayClient.Answer report = this.client.getNow("/actuator/gatewaylb");
		assertThat(report.status()).isEqualTo(200);
		assertThat(report.body()).contains("\"guarded\"")
			.contains("\"override\":true")
			.doesNotContain("X-Secret-Target");
		assertThat(this.client.getNow("/actuator/gatewaylb/shop").body()).contains("\"override\":true")
			.doesNotContain("X-Secret-Target");
	}

}
