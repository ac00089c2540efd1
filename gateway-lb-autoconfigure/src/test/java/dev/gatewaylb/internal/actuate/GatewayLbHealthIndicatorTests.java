package dev.gatewaylb.internal.actuate;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.control.ManualControlThread;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

class GatewayLbHealthIndicatorTests {

	private final AtomicLong clock = new AtomicLong(1_000_000_000L);

	private final ManualControlThread control = new ManualControlThread(this.clock);

	private final GatewayLbHealthIndicator indicator = new GatewayLbHealthIndicator(this.control);

	@Test
	void upWhileEveryLoopEndsItsRunsWithTheLoopsInTheDetails() {
		this.control.every("discovery-poll", Duration.ofSeconds(1), () -> {
		});
		this.control.every("rollout-tick", Duration.ofMillis(250), () -> {
			throw new IllegalStateException("expected by the test");
		});
		for (int i = 0; i < 20; i++) {
			try {
				this.control.advance(Duration.ofMillis(250));
			}
			catch (IllegalStateException expected) {
				// The failing tick, which still ends its runs.
			}
		}
		Health health = this.indicator.health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		@SuppressWarnings("unchecked")
		Map<String, Map<String, Object>> loops = (Map<String, Map<String, Object>>) health.getDetails().get("loops");
		assertThat(loops).containsOnlyKeys("discovery-poll", "rollout-tick");
		assertThat(loops.get("discovery-poll")).containsEntry("intervalMillis", 1000L).containsEntry("failures", 0L);
		assertThat(loops.get("rollout-tick")).containsEntry("failures", 20L);
	}

	@Test
	void downWhenALoopHasNotEndedARunForThreeOfItsIntervalsAndUpAgainOnceItHas() {
		this.control.every("discovery-poll", Duration.ofSeconds(1), () -> {
		});
		this.control.every("rollout-tick", Duration.ofMillis(250), () -> {
		});
		this.control.advance(Duration.ofSeconds(1));
		// The control thread is held up: time passes, nothing runs.
		this.clock.addAndGet(Duration.ofMillis(751).toNanos());
		Health stuckTick = this.indicator.health();
		assertThat(stuckTick.getStatus()).isEqualTo(Status.DOWN);
		assertThat(stuckTick.getDetails()).containsEntry("stuck", java.util.List.of("rollout-tick"));
		this.clock.addAndGet(Duration.ofSeconds(3).toNanos());
		assertThat(this.indicator.health().getDetails()).containsEntry("stuck",
				java.util.List.of("discovery-poll", "rollout-tick"));
		this.control.runDue();
		assertThat(this.indicator.health().getStatus()).isEqualTo(Status.UP);
	}

	@Test
	void aCancelledLoopIsNoLongerWatched() {
		this.control.every("latency-ejection", Duration.ofSeconds(1), () -> {
		}).cancel();
		this.clock.addAndGet(Duration.ofMinutes(1).toNanos());
		assertThat(this.indicator.health().getStatus()).isEqualTo(Status.UP);
	}

	@Test
	void aSourceWithAViewOfItsOwnShowsItAndIsDownWhileItNamesAProblem() {
		java.util.concurrent.atomic.AtomicReference<dev.gatewaylb.gateway.discovery.SourceStatus> status = new java.util.concurrent.atomic.AtomicReference<>(
				new dev.gatewaylb.gateway.discovery.SourceStatus("kubernetes", true,
						java.time.Instant.parse("2026-12-06T10:00:00Z"), null));
		dev.gatewaylb.gateway.discovery.InstanceSource source = new dev.gatewaylb.gateway.discovery.InstanceSource() {

			@Override
			public boolean balancesHere(String serviceId) {
				return true;
			}

			@Override
			public reactor.core.publisher.Mono<java.util.List<org.springframework.cloud.client.ServiceInstance>> instances(
					String serviceId) {
				return reactor.core.publisher.Mono.just(java.util.List.of());
			}

			@Override
			public dev.gatewaylb.gateway.discovery.SourceStatus status() {
				return status.get();
			}

		};
		GatewayLbHealthIndicator indicator = new GatewayLbHealthIndicator(this.control, source);
		Health inSync = indicator.health();
		assertThat(inSync.getStatus()).isEqualTo(Status.UP);
		assertThat(inSync.getDetails()).containsEntry("discovery",
				java.util.Map.of("source", "kubernetes", "inSync", true, "lastSync", "2026-12-06T10:00:00Z"));
		status.set(new dev.gatewaylb.gateway.discovery.SourceStatus("kubernetes", false,
				java.time.Instant.parse("2026-12-06T10:00:00Z"), "the watch of namespace shop has been down for 91 s"));
		Health down = indicator.health();
		assertThat(down.getStatus()).isEqualTo(Status.DOWN);
		assertThat(down.getDetails().get("discovery").toString()).contains("down for 91 s");
		assertThat(this.indicator.health().getDetails()).as("a polled source shows nothing")
			.doesNotContainKey("discovery");
	}

}
