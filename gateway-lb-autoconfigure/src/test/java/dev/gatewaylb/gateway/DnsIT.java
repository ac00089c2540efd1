package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Hostname endpoints resolved through {@code gateway.lb.dns}, against a small DNS server
 * on loopback that the test runs and counts the questions of: the names resolve through
 * the servers configured (the system's resolvers know nothing of them), and a name that
 * does not resolve is asked once per {@code negative-ttl}, not once per request.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class DnsIT extends GatewayIntegrationTest {

	static final TestDnsServer dns = new TestDnsServer(
			Map.of("good.gwlb.test", List.of(TestDnsServer.ip("127.0.0.1"))));

	static final TestBackend backend = TestBackend.start("named");

	/**
	 * {@code gateway.lb.dns.negative-ttl}, the default.
	 */
	static final Duration NEGATIVE_TTL = Duration.ofSeconds(2);

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("named")
			.uris("named", List.of("http://good.gwlb.test:" + backend.port()))
			.route("nowhere")
			.uris("nowhere", List.of("http://nowhere.gwlb.test:59999"))
			.set("gateway.lb.services.nowhere.retry.attempts", 0)
			.set("gateway.lb.services.nowhere.health.passive.consecutive-failures", 0)
			.set("gateway.lb.dns.servers", "127.0.0.1:" + dns.port());
	}

	@AfterAll
	static void stop() {
		backend.close();
		dns.close();
	}

	@Test
	void aHostnameEndpointResolvesThroughTheConfiguredServers() {
		for (int i = 0; i < 5; i++) {
			GatewayClient.Answer answer = this.client.getNow("/named/");
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.backend()).isEqualTo("named");
		}
		assertThat(dns.questions("good.gwlb.test")).as("questions about the name, of all %s", dns).isPositive();
	}

	@Test
	void aNameThatDoesNotResolveIsAskedOncePerNegativeTtl() {
		long start = System.nanoTime();
		assertThat(this.client.getNow("/nowhere/").status()).isEqualTo(502);
		int asked = dns.questions("nowhere.gwlb.test");
		assertThat(asked).as("questions of the first resolution, of all %s", dns).isPositive();
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/nowhere/").status()).isEqualTo(502);
		}
		// The failure is kept for negative-ttl (2 s): each period that began since the
		// first request asks once more at most, however many requests came. On a quiet
		// machine the 20 requests take well under one period, and none asks again.
		long periods = (System.nanoTime() - start) / NEGATIVE_TTL.toNanos();
		assertThat(dns.questions("nowhere.gwlb.test")).as("questions after 20 more requests, the failure cached")
			.isLessThanOrEqualTo(asked * (1 + (int) periods));
		// Once it has been kept that long, the next request asks again.
		int before = dns.questions("nowhere.gwlb.test");
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
			this.client.getNow("/nowhere/");
			return dns.questions("nowhere.gwlb.test") > before;
		});
	}

}
