package dev.gatewaylb.internal.health;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.IntPredicate;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.Snapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class OutlierDetectionTests {

	private static final long SECOND = 1_000_000_000L;

	private static final long SEED = 5;

	/**
	 * One source for the whole test, so that each pick draws afresh.
	 */
	private final Random random = new Random(SEED);

	private final AtomicLong clock = new AtomicLong(100 * SECOND);

	private final OutlierDetection detection = new OutlierDetection(3, 10 * SECOND, 50);

	/**
	 * The ejections of each balancer, as its service runtime keeps them.
	 */
	private final Map<Balancer<?>, Ejections> ejections = new IdentityHashMap<>();

	@Test
	void ejectsAfterTheConsecutiveFailuresAndOnlyThen() {
		Balancer<Endpoint> balancer = balancer(Algorithm.ROUND_ROBIN, 4);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, ejections(balancer), now())).isFalse();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, ejections(balancer), now())).isFalse();
		this.detection.succeeded(snapshot.state(0), now());
		assertThat(this.detection.failed(snapshot.state(0), snapshot, ejections(balancer), now())).isFalse();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, ejections(balancer), now())).isFalse();
		assertThat(this.detection.failed(snapshot.state(0), snapshot, ejections(balancer), now())).isTrue();
		Snapshot<Endpoint> after = balancer.reevaluate();
		assertThat(picks(after, 30)).doesNotContain("a");
	}

	@Test
	void returnsAfterTheEjectionTimeRampingUnderSlowStartAndEjectsLongerTheNextTime() {
		Balancer<Endpoint> balancer = new Balancer<>(
				new BalancerSettings(Algorithm.ROUND_ROBIN, 20 * SECOND, BalancerSettings.DEFAULTS.ewmaDecayNanos()),
				Function.identity(), this.clock::get, () -> null);
		balancer.update(endpoints(2));
		eject(balancer, 0);
		this.clock.addAndGet(10 * SECOND - 1);
		assertThat(picks(balancer.snapshot(), 10)).doesNotContain("a");
		this.clock.addAndGet(1);
		// The first pick after the ejection ends rebuilds; a is back at a tenth.
		picks(balancer.snapshot(), 1);
		assertThat(balancer.snapshot().effectiveWeight(0)).isEqualTo(0.1);
		// Weights 0.1 and 1 are 1 and 10: one pick in 11.
		assertThat(picks(balancer.snapshot(), 11 * 4).chars().filter((c) -> c == 'a').count()).isEqualTo(4);
		eject(balancer, 0);
		assertThat(balancer.snapshot().state(0).ejectedUntilNanos() - now()).isEqualTo(20 * SECOND);
	}

	@Test
	void neverEjectsMoreThanTheMaximumPercentButAlwaysOne() {
		Balancer<Endpoint> balancer = balancer(Algorithm.LEAST_REQUESTS, 3);
		eject(balancer, 0);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		for (int i = 0; i < 10; i++) {
			assertThat(this.detection.failed(snapshot.state(1), snapshot, ejections(balancer), now())).isFalse();
		}
		assertThat(snapshot.state(1).isEjected(now())).isFalse();
		OutlierDetection strict = new OutlierDetection(1, SECOND, 10);
		Balancer<Endpoint> small = balancer(Algorithm.ROUND_ROBIN, 3);
		assertThat(strict.failed(small.snapshot().state(2), small.snapshot(), ejections(small), now())).isTrue();
	}

	@Test
	void failsOpenAcrossEveryEndpointWhenAllAreOut() {
		OutlierDetection eager = new OutlierDetection(1, 10 * SECOND, 100);
		Balancer<Endpoint> balancer = balancer(Algorithm.ROUND_ROBIN, 2);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		assertThat(eager.failed(snapshot.state(0), snapshot, ejections(balancer), now())).isTrue();
		assertThat(eager.failed(snapshot.state(1), snapshot, ejections(balancer), now())).isTrue();
		Snapshot<Endpoint> out = balancer.reevaluate();
		assertThat(out.isFailOpen()).isTrue();
		assertThat(picks(out, 4)).isEqualTo("abab");
		balancer.drain(out.endpoint(0).address(), true);
		balancer.drain(out.endpoint(1).address(), true);
		assertThat(balancer.snapshot().isFailOpen()).isFalse();
		assertThat(balancer.snapshot().select(null)).as("drained endpoints never fail open").isEqualTo(-1);
	}

	@Test
	void keepsAnEndpointThatActiveChecksFindUnhealthyOut() {
		Balancer<Endpoint> balancer = balancer(Algorithm.POWER_OF_TWO_CHOICES, 3);
		assertThat(balancer.snapshot().state(1).markHealthy(false)).isTrue();
		assertThat(balancer.snapshot().state(1).markHealthy(false)).isFalse();
		Snapshot<Endpoint> snapshot = balancer.reevaluate();
		String picks = picks(snapshot, 200);
		assertThat(picks).as("seed %d", SEED).doesNotContain("b");
		// Both others must come up, or the draws were all the same and proved nothing.
		assertThat(picks).as("seed %d", SEED).contains("a", "c");
	}

	@Test
	void neverEjectsMoreThanTheMaximumPercentWhenEndpointsFailAtOnceOnManyThreads() throws Exception {
		// 8 endpoints at 25%: 2 may be out at once. Each thread fails its own endpoint
		// once per round, all released together; the clock then moves past every
		// ejection before the next round.
		OutlierDetection eager = new OutlierDetection(1, SECOND, 25);
		Balancer<Endpoint> balancer = balancer(Algorithm.ROUND_ROBIN, 8);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		Ejections ejections = ejections(balancer);
		int rounds = 2_000;
		Rounds run = new Rounds(snapshot.size(), rounds,
				(i) -> eager.failed(snapshot.state(i), snapshot, ejections, now()));
		run.start();
		for (int round = 0; round < rounds; round++) {
			run.round();
			assertThat(ejected(snapshot)).as("ejected after round %d", round).isEqualTo(2);
			assertThat(ejections.ejected(now())).as("live ejections after round %d", round).isEqualTo(2);
			this.clock.addAndGet(OutlierDetection.MAX_EJECTION_MULTIPLIER * SECOND);
			assertThat(ejected(snapshot)).as("ejected once round %d ended", round).isZero();
			assertThat(ejections.ejected(now())).as("live ejections once round %d ended", round).isZero();
		}
		run.stop();
	}

	@Test
	void keepsTheLimitWhenEveryFailureChecksItBeforeAnyEjectionIsEntered() throws Exception {
		// The widest race there is: every thread has checked the limit before any of
		// them enters its ejection. A check that is not atomic with the ejection lets
		// all 8 out.
		OutlierDetection eager = new OutlierDetection(1, SECOND, 25);
		Balancer<Endpoint> balancer = balancer(Algorithm.ROUND_ROBIN, 8);
		Snapshot<Endpoint> snapshot = balancer.snapshot();
		Ejections ejections = ejections(balancer);
		AtomicReference<CountDownLatch> checked = new AtomicReference<>();
		ejections.afterCheck = () -> {
			CountDownLatch latch = checked.get();
			latch.countDown();
			try {
				// Bounded: a thread that never reaches its check must not hang the test.
				latch.await(5, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		};
		int rounds = 20;
		Rounds run = new Rounds(snapshot.size(), rounds, (i) -> {
			boolean ejected = eager.failed(snapshot.state(i), snapshot, ejections, now());
			// A failure refused without reaching the seam counts as checked too.
			checked.get().countDown();
			return ejected;
		});
		run.start();
		for (int round = 0; round < rounds; round++) {
			checked.set(new CountDownLatch(snapshot.size()));
			run.round();
			assertThat(ejected(snapshot)).as("ejected after round %d", round).isEqualTo(2);
			this.clock.addAndGet(OutlierDetection.MAX_EJECTION_MULTIPLIER * SECOND);
			assertThat(ejections.ejected(now())).as("live ejections once round %d ended", round).isZero();
		}
		run.stop();
	}

	@Test
	void countsOnlyTheChosenStatusesAsFailures() {
		OutlierDetection gatewayFailures = new OutlierDetection(5, SECOND, 50,
				FailureStatuses.of(List.of(502, 503, 504)));
		assertThat(gatewayFailures.countsAsFailure(502)).isTrue();
		assertThat(gatewayFailures.countsAsFailure(504)).isTrue();
		assertThat(gatewayFailures.countsAsFailure(500)).isFalse();
		assertThat(gatewayFailures.countsAsFailure(505)).isFalse();
		assertThat(gatewayFailures.countsAsFailure(200)).isFalse();
		assertThat(this.detection.countsAsFailure(500)).isTrue();
		assertThat(this.detection.countsAsFailure(599)).isTrue();
		assertThat(this.detection.countsAsFailure(499)).isFalse();
	}

	private int ejected(Snapshot<Endpoint> snapshot) {
		int ejected = 0;
		for (int i = 0; i < snapshot.size(); i++) {
			if (snapshot.state(i).isEjected(now())) {
				ejected++;
			}
		}
		return ejected;
	}

	private void eject(Balancer<Endpoint> balancer, int index) {
		OutlierDetection once = new OutlierDetection(1, 10 * SECOND, 100);
		assertThat(once.failed(balancer.snapshot().state(index), balancer.snapshot(), ejections(balancer), now()))
			.isTrue();
		balancer.reevaluate();
	}

	private Ejections ejections(Balancer<?> balancer) {
		return this.ejections.computeIfAbsent(balancer, (b) -> new Ejections());
	}

	private Balancer<Endpoint> balancer(Algorithm algorithm, int size) {
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS.withAlgorithm(algorithm),
				Function.identity(), this.clock::get, () -> this.random);
		balancer.update(endpoints(size));
		return balancer;
	}

	private static List<Endpoint> endpoints(int size) {
		return java.util.stream.IntStream.range(0, size)
			.mapToObj((i) -> Endpoint.of("10.0.0." + (i + 1), 80, 1))
			.toList();
	}

	private static String picks(Snapshot<Endpoint> snapshot, int count) {
		StringBuilder picks = new StringBuilder();
		for (int i = 0; i < count; i++) {
			picks.append((char) ('a' + snapshot.select(null)));
		}
		return picks.toString();
	}

	private long now() {
		return this.clock.get();
	}

	/**
	 * One thread per endpoint, each failing its endpoint once per round; all start a
	 * round together and the test thread waits until all are done with it.
	 */
	private static final class Rounds {

		private final List<Thread> threads = new ArrayList<>();

		private final CyclicBarrier start;

		private final CyclicBarrier end;

		private final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();

		Rounds(int endpoints, int rounds, IntPredicate fail) {
			this.start = new CyclicBarrier(endpoints + 1);
			this.end = new CyclicBarrier(endpoints + 1);
			for (int i = 0; i < endpoints; i++) {
				int endpoint = i;
				this.threads.add(new Thread(() -> {
					try {
						for (int round = 0; round < rounds; round++) {
							this.start.await(10, TimeUnit.SECONDS);
							fail.test(endpoint);
							this.end.await(10, TimeUnit.SECONDS);
						}
					}
					catch (Throwable ex) {
						this.errors.add(ex);
					}
				}, "failing-" + i));
			}
		}

		void start() {
			this.threads.forEach(Thread::start);
		}

		void round() throws Exception {
			this.start.await(10, TimeUnit.SECONDS);
			this.end.await(10, TimeUnit.SECONDS);
			assertThat(this.errors).isEmpty();
		}

		void stop() throws InterruptedException {
			for (Thread thread : this.threads) {
				thread.join(10_000);
			}
			assertThat(this.errors).isEmpty();
		}

	}

}
