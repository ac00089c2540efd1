package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The management guard on a management port of its own, as the production checklist sets
 * it up: a browser's cross-site drain is refused there too, curl's is taken, and a Host
 * that is not allowed gets nothing there while the application's port is left alone.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.server.port=0")
class ManagementPortWriteGuardIT {

	static final List<TestBackend> backends = List.of(TestBackend.start("a"), TestBackend.start("b"));

	@LocalManagementPort
	int managementPort;

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("managed")
			.instances("managed", backends)
			.set("management.endpoints.web.exposure.include", "gatewaylb")
			.set("management.endpoint.gatewaylb.access", "unrestricted");
	}

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
	}

	@Test
	void refusesACrossSiteDrainOnTheManagementPortAndTakesCurls() {
		awaitProxied();
		String b = "127.0.0.1:" + backends.get(1).port();
		assertThat(post("{\"endpoint\":\"" + b + "\",\"drain\":true}", Map.of("Sec-Fetch-Site", "cross-site")))
			.isEqualTo(403);
		assertThat(post("{\"endpoint\":\"" + b + "\",\"drain\":false}", Map.of())).isEqualTo(200);
	}

	@Test
	void answersNoForeignHostOnTheManagementPortAndLeavesTheApplicationsPortAlone() {
		awaitProxied();
		String rebound = "x.attacker.example:" + this.managementPort;
		assertThat(get(this.managementPort, "/actuator/gatewaylb/managed", rebound)).isEqualTo(403);
		assertThat(get(this.managementPort, "/elsewhere", rebound)).as("any path of the port").isEqualTo(403);
		assertThat(get(this.managementPort, "/actuator/gatewaylb/managed", "localhost:" + this.managementPort))
			.isEqualTo(200);
	}

	/**
	 * Waits until a proxied request with a foreign Host is answered 200: the guard leaves
	 * the application's port alone, and the service's first discovery answer, which may
	 * be on its way (404 until then), has come, so the endpoint knows the service too.
	 */
	private void awaitProxied() {
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(get(this.port, "/managed/", "x.attacker.example:" + this.port))
				.as("a proxied request")
				.isEqualTo(200));
	}

	private int get(int port, String path, String host) {
		return HttpClient.newConnection()
			.headers((h) -> h.set("Host", host))
			.get()
			.uri("http://127.0.0.1:" + port + path)
			.responseSingle(
					(response, body) -> body.asString().defaultIfEmpty("").map((text) -> response.status().code()))
			.block(Duration.ofSeconds(10));
	}

	private int post(String json, Map<String, String> headers) {
		return HttpClient.newConnection().headers((h) -> {
			h.set("Content-Type", "application/json");
			headers.forEach(h::set);
		})
			.post()
			.uri("http://127.0.0.1:" + this.managementPort + "/actuator/gatewaylb/managed")
			.send(ByteBufFlux.fromString(Mono.just(json)))
			.responseSingle(
					(response, body) -> body.asString().defaultIfEmpty("").map((text) -> response.status().code()))
			.block(Duration.ofSeconds(10));
	}

}
