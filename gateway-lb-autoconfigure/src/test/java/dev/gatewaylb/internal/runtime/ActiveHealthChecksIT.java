package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.cloud.client.DefaultServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Active health checks on the manual control thread, against real probe targets on
 * loopback: one endpoint answers its health path 503, one never answers it, one answers
 * 200. The probes are started by the test moving the clock; their answers arrive on the
 * probe client's event loops.
 */
class ActiveHealthChecksIT {

	/**
	 * Far longer than the test waits: the hanging probe is still on its way when the test
	 * ends.
	 */
	private static final Duration PROBE_TIMEOUT = Duration.ofMinutes(2);

	private final AtomicInteger hangingProbes = new AtomicInteger();

	private final DisposableServer failing = server((request, response) -> response.status(503).send().then());

	private final DisposableServer hanging = server((request, response) -> {
		this.hangingProbes.incrementAndGet();
		return Mono.never();
	});

	private final AtomicInteger healthyProbes = new AtomicInteger();

	private final DisposableServer healthy = server((request, response) -> {
		this.healthyProbes.incrementAndGet();
		return response.status(200).send().then();
	});

	private final TestRuntimes fixture = new TestRuntimes(Map.of("gateway.lb.services.svc.health.active.enabled",
			"true", "gateway.lb.services.svc.health.active.path", "/health",
			"gateway.lb.services.svc.health.active.interval", "10s", "gateway.lb.services.svc.health.active.timeout",
			PROBE_TIMEOUT.toSeconds() + "s"));

	private final ActiveHealthChecks checks = new ActiveHealthChecks(this.fixture.runtimes, this.fixture.control);

	@AfterEach
	void stop() {
		this.fixture.close();
		this.failing.disposeNow();
		this.hanging.disposeNow();
		this.healthy.disposeNow();
	}

	@Test
	void anEndpointSeenUnhealthyStopsGettingPicksWhileAnotherEndpointsProbeStillHangs() {
		this.fixture.instances.add(instance("failing", this.failing));
		this.fixture.instances.add(instance("hanging", this.hanging));
		this.fixture.instances.add(instance("healthy", this.healthy));
		// Configured, so tracked from the start: polled again now that it has instances.
		this.fixture.poll();
		ServiceRuntime runtime = this.fixture.runtime("svc");
		assertThat(picks(runtime)).containsKeys("failing", "hanging", "healthy");
		this.checks.start();
		this.fixture.advance(ActiveHealthChecks.TICK);
		// The 503 arrives on an event loop, which asks for the rebuild; the test runs
		// the control thread's tasks until it has run.
		await().atMost(Duration.ofSeconds(10)).pollInSameThread().until(() -> {
			this.fixture.control.runDue();
			return !picks(runtime).containsKey("failing");
		});
		assertThat(this.hangingProbes).as("the hanging probe arrived and is still unanswered").hasValue(1);
		assertThat(picks(runtime)).containsOnlyKeys("hanging", "healthy");
		assertThat(state(runtime, "hanging")).as("not judged yet").isTrue();
		assertThat(state(runtime, "failing")).isFalse();
	}

	@Test
	void probesEveryEndpointWhenItsNamedJobRuns() {
		this.fixture.instances.add(instance("healthy", this.healthy));
		this.fixture.poll();
		this.checks.start();
		this.checks.start();
		assertThat(this.fixture.control.jobs()).containsOnlyOnce("active-health every 250ms");
		this.fixture.advance(ActiveHealthChecks.TICK);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.healthyProbes.get() == 1);
	}

	/**
	 * Returns how often each endpoint is picked in 30 picks from the service's current
	 * snapshot.
	 */
	private static Map<String, Integer> picks(ServiceRuntime runtime) {
		Snapshot<Member> snapshot = runtime.snapshot();
		Map<String, Integer> counts = new HashMap<>();
		for (int i = 0; i < 30; i++) {
			int index = snapshot.select(null);
			snapshot.acquire(index).release();
			counts.merge(snapshot.value(index).instance().getInstanceId(), 1, Integer::sum);
		}
		return counts;
	}

	private static boolean state(ServiceRuntime runtime, String instanceId) {
		Snapshot<Member> snapshot = runtime.snapshot();
		for (int i = 0; i < snapshot.size(); i++) {
			if (snapshot.value(i).instance().getInstanceId().equals(instanceId)) {
				return snapshot.state(i).isHealthy();
			}
		}
		throw new IllegalStateException(instanceId + " is not an endpoint");
	}

	private static DefaultServiceInstance instance(String id, DisposableServer server) {
		return new DefaultServiceInstance(id, "svc", "127.0.0.1", server.port(), false);
	}

	private static DisposableServer server(
			java.util.function.BiFunction<reactor.netty.http.server.HttpServerRequest, reactor.netty.http.server.HttpServerResponse, org.reactivestreams.Publisher<Void>> health) {
		return HttpServer.create().host("127.0.0.1").port(0).route((routes) -> routes.get("/health", health)).bindNow();
	}

}
