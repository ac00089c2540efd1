package dev.gatewaylb.gateway;

import dev.gatewaylb.internal.discovery.Member;
import java.time.Duration;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every gateway integration test shares: a client of the gateway on its random port,
 * the runtimes to look inside, and one invariant checked after each test: whatever
 * happened, every request leaves the in-flight counts as it found them.
 */
abstract class GatewayIntegrationTest {

	@LocalServerPort
	int port;

	@Autowired
	ServiceRuntimes runtimes;

	GatewayClient client;

	@BeforeEach
	void connect() {
		this.client = new GatewayClient(this.port);
	}

	@AfterEach
	void disconnectAndCheckNothingIsLeftInFlight() {
		this.client.close();
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> this.runtimes.snapshots().values().forEach((snapshot) -> {
				for (int i = 0; i < snapshot.size(); i++) {
					assertThat(snapshot.state(i).inFlight()).as(snapshot.state(i).address()).isZero();
				}
			}));
	}

	/**
	 * Returns a service's runtime once discovery's first answer is applied: services are
	 * built in the background from start-up, and a test may look before its first
	 * request.
	 */
	ServiceRuntime ready(String service) {
		return this.runtimes.whenReady(service).block(Duration.ofSeconds(10));
	}

	/**
	 * Returns the state of the first endpoint of a service: the one of a one-endpoint
	 * service.
	 */
	EndpointState state(String service) {
		Snapshot<Member> snapshot = this.runtimes.snapshot(service);
		assertThat(snapshot).isNotNull();
		return snapshot.state(0);
	}

	/**
	 * Returns the state of a service's endpoint by its {@code host:port}.
	 */
	EndpointState state(String service, String address) {
		Snapshot<Member> snapshot = this.runtimes.snapshot(service);
		for (int i = 0; snapshot != null && i < snapshot.size(); i++) {
			if (snapshot.state(i).address().equals(address)) {
				return snapshot.state(i);
			}
		}
		throw new IllegalStateException(address + " is not an endpoint of " + service);
	}

	/**
	 * Returns whether a request to the service can be sent to the endpoint now: whether
	 * the snapshot requests pick from has it among its candidates. An ejection, a failed
	 * health check or a drain marks the endpoint's state first and reaches picks with the
	 * rebuild that follows, so a test that waits for one to take effect waits on this,
	 * not on the mark. Counts no pick.
	 */
	boolean isPickable(String service, String address) {
		Snapshot<Member> snapshot = this.runtimes.snapshot(service);
		return snapshot != null && snapshot.selectAvoiding((other) -> !other.equals(address)) >= 0;
	}

	/**
	 * Returns the requests in flight to a service, over its endpoints.
	 */
	int inFlight(String service) {
		Snapshot<Member> snapshot = this.runtimes.snapshot(service);
		int total = 0;
		for (int i = 0; snapshot != null && i < snapshot.size(); i++) {
			total += snapshot.state(i).inFlight();
		}
		return total;
	}

	/**
	 * Returns the value of one series from {@code /actuator/prometheus}, 0 if absent.
	 */
	double metric(String series) {
		for (String line : this.client.getNow("/actuator/prometheus").body().split("\n")) {
			if (line.startsWith(series + " ")) {
				return Double.parseDouble(line.substring(series.length() + 1).trim());
			}
		}
		return 0;
	}

}
