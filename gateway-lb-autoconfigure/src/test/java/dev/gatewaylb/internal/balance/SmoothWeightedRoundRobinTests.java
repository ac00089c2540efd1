package dev.gatewaylb.internal.balance;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.gatewaylb.internal.balance.TestBalancers.picks;
import static dev.gatewaylb.internal.balance.TestBalancers.weights;
import static org.assertj.core.api.Assertions.assertThat;

class SmoothWeightedRoundRobinTests {

	private final TestBalancers balancers = new TestBalancers();

	@ParameterizedTest(name = "weights {0} select {1}")
	@CsvSource(delimiter = '|', textBlock = """
			5,1,1 | aabacaa
			5,1,2 | acaabaca
			1,1,1 | abc
			2,2   | ab
			3,0,1 | aaca
			0,4,2 | bcb
			1     | a
			""")
	void selectsTheNginxSequence(String weights, String period) {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.ROUND_ROBIN, weights(weights)).snapshot();
		assertThat(picks(snapshot, period.length() * 3)).isEqualTo(period.repeat(3));
	}

	@Test
	void matchesNginxStepByStepAndRunningWeightsReturnToZeroOverEveryPeriod() {
		Random random = new Random(7);
		for (int round = 0; round < 300; round++) {
			int[] weights = random.ints(1 + random.nextInt(12), 0, 1 + random.nextInt(40)).toArray();
			NginxReference nginx = new NginxReference(weights);
			int total = Arrays.stream(weights).sum();
			if (total == 0) {
				assertThat(SmoothWeightedRoundRobin.sequence(weights)).isEmpty();
				continue;
			}
			int[] table = SmoothWeightedRoundRobin.sequence(weights);
			int[] counts = new int[weights.length];
			for (int step = 0; step < total; step++) {
				int expected = nginx.next();
				assertThat(table[step % table.length]).as("weights %s step %d", Arrays.toString(weights), step)
					.isEqualTo(expected);
				counts[expected]++;
			}
			assertThat(counts).isEqualTo(weights);
			assertThat(nginx.runningWeights()).containsOnly(0);
		}
	}

	@Test
	void keepsAllOfLargeUniformSetsWithoutATableBiggerThanTheSet() {
		int[] weights = new int[100_000];
		Arrays.fill(weights, 3);
		int[] table = SmoothWeightedRoundRobin.sequence(weights);
		assertThat(table).hasSize(100_000);
		assertThat(table[0]).isZero();
		assertThat(table[99_999]).isEqualTo(99_999);
	}

	@Test
	void approximatesPeriodsLongerThanTheTableLimitKeepingEveryEndpoint() {
		int[] weights = { SmoothWeightedRoundRobin.MAX_PERIOD, SmoothWeightedRoundRobin.MAX_PERIOD / 2 + 1, 1 };
		int[] table = SmoothWeightedRoundRobin.sequence(weights);
		assertThat(table.length).isLessThanOrEqualTo(SmoothWeightedRoundRobin.MAX_PERIOD);
		long[] counts = new long[3];
		for (int index : table) {
			counts[index]++;
		}
		assertThat(counts[2]).isPositive();
		assertThat((double) counts[0] / counts[1]).isCloseTo(2.0, org.assertj.core.data.Offset.offset(0.01));
	}

	@Test
	void continuesTheSequenceAcrossARebuildOfTheSameEndpoints() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 5, 1, 1);
		String before = picks(balancer.snapshot(), 3);
		balancer.update(TestBalancers.endpoints(5, 1, 1));
		assertThat(before + picks(balancer.snapshot(), 11)).isEqualTo("aabacaa".repeat(2));
	}

	@Test
	void givesExactCountsOverAFullPeriodAfterAnEndpointJoins() {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 5, 1, 1);
		picks(balancer.snapshot(), 4);
		balancer.update(TestBalancers.endpoints(5, 1, 1, 3));
		String period = picks(balancer.snapshot(), 10);
		assertThat(period.chars().filter((c) -> c == 'a').count()).isEqualTo(5);
		assertThat(period.chars().filter((c) -> c == 'd').count()).isEqualTo(3);
	}

	@Test
	void givesExactCountsAndReleasesEveryGuardUnderEightThreadsWhileRebuilding() throws Exception {
		Balancer<Endpoint> balancer = this.balancers.balancer(Algorithm.ROUND_ROBIN, 5, 1, 2);
		int threads = 8;
		int picksPerThread = 125_000;
		AtomicLongArray counts = new AtomicLongArray(3);
		java.util.concurrent.BlockingQueue<InFlightGuard> toRelease = new java.util.concurrent.LinkedBlockingQueue<>();
		java.util.concurrent.atomic.AtomicBoolean picking = new java.util.concurrent.atomic.AtomicBoolean(true);
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
		try {
			// Rebuilds of the same endpoints swap snapshots under the pickers' feet, and
			// guards are released by another thread than the one that picked.
			Future<?> rebuilder = pool.submit(() -> {
				start.await();
				while (picking.get()) {
					balancer.update(TestBalancers.endpoints(5, 1, 2));
				}
				return null;
			});
			Future<?> releaser = pool.submit(() -> {
				while (picking.get() || !toRelease.isEmpty()) {
					InFlightGuard guard = toRelease.poll(10, TimeUnit.MILLISECONDS);
					if (guard != null) {
						guard.release();
						guard.release();
					}
				}
				return null;
			});
			List<Future<Object>> done = java.util.stream.IntStream.range(0, threads).mapToObj((t) -> pool.submit(() -> {
				start.await();
				long[] local = new long[3];
				for (int i = 0; i < picksPerThread; i++) {
					Snapshot<Endpoint> snapshot = balancer.snapshot();
					int index = snapshot.select(null);
					InFlightGuard guard = snapshot.acquire(index);
					local[index]++;
					if ((i & 7) == 0) {
						toRelease.add(guard);
					}
					else {
						guard.release();
					}
				}
				for (int i = 0; i < 3; i++) {
					counts.addAndGet(i, local[i]);
				}
				return null;
			})).toList();
			start.countDown();
			for (Future<Object> future : done) {
				future.get(60, TimeUnit.SECONDS);
			}
			picking.set(false);
			rebuilder.get(10, TimeUnit.SECONDS);
			releaser.get(10, TimeUnit.SECONDS);
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(counts.get(0)).isEqualTo(625_000);
		assertThat(counts.get(1)).isEqualTo(125_000);
		assertThat(counts.get(2)).isEqualTo(250_000);
		Snapshot<Endpoint> last = balancer.snapshot();
		for (int i = 0; i < 3; i++) {
			assertThat(last.state(i).inFlight()).isZero();
			assertThat(last.state(i).picks()).isEqualTo(counts.get(i));
		}
	}

	/**
	 * nginx's {@code ngx_http_upstream_get_peer}, one step at a time, for comparison.
	 */
	static final class NginxReference {

		private final int[] weights;

		private final long[] current;

		private final long total;

		NginxReference(int[] weights) {
			this.weights = weights;
			this.current = new long[weights.length];
			this.total = Arrays.stream(weights).sum();
		}

		int next() {
			int best = -1;
			for (int i = 0; i < this.weights.length; i++) {
				if (this.weights[i] == 0) {
					continue;
				}
				this.current[i] += this.weights[i];
				if (best < 0 || this.current[i] > this.current[best]) {
					best = i;
				}
			}
			this.current[best] -= this.total;
			return best;
		}

		long[] runningWeights() {
			return this.current;
		}

	}

}
