package dev.gatewaylb.internal.balance;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class LevelSpillTests {

	private static final int[] TWO_LEVELS = { 0, 1 };

	private static final double MS = 1_000_000;

	private final LevelSpill spill = new LevelSpill();

	@Test
	void aQuietLevelNeverSpillsHoweverSlowItsAnswers() {
		for (int window = 0; window < 100; window++) {
			// One request in flight over three endpoints, answers of 10 to 30 ms.
			Map<Integer, LevelSpill.Load> loads = this.spill.next(TWO_LEVELS,
					new double[] { (10 + window % 3 * 10) * MS, Double.NaN }, new double[] { 1.0 / 3, 0 });
			assertThat(loads.get(0).spilling()).as("window %d", window).isFalse();
		}
	}

	@Test
	void aQueueingLevelSlowerThanItWasUnloadedSpillsUntilItStopsQueueing() {
		Map<Integer, LevelSpill.Load> loads = this.spill.next(TWO_LEVELS, new double[] { 10 * MS, Double.NaN },
				new double[] { 0.3, 0 });
		assertThat(loads.get(0).spilling()).isFalse();
		// Ten requests per endpoint, answers of 100 ms: the next level, unknown yet, is
		// costed at the busy level's lowest latency.
		for (int window = 0; window < 4; window++) {
			loads = this.spill.next(TWO_LEVELS, new double[] { 100 * MS, Double.NaN }, new double[] { 10, 0 });
		}
		assertThat(loads.get(0).spilling()).isTrue();
		assertThat(loads.get(1).unitNanos()).as("the lowest, rising a percent a window")
			.isCloseTo(10 * MS, within(0.5 * MS));
		assertThat(loads.get(0).unitNanos()).as("latency over in flight + 1").isGreaterThan(5 * MS);
		// Once the next level answers, its own latency is its cost.
		loads = this.spill.next(TWO_LEVELS, new double[] { 30 * MS, 12 * MS }, new double[] { 2, 0.5 });
		// Its requests in flight smoothed from 0 to 0.25.
		assertThat(loads.get(1).unitNanos()).isCloseTo(12 * MS / 1.25, within(1.0));
		assertThat(loads.get(0).spilling()).as("still queueing").isTrue();
		for (int window = 0; window < 10; window++) {
			loads = this.spill.next(TWO_LEVELS, new double[] { 10 * MS, 12 * MS }, new double[] { 0.2, 0.1 });
		}
		assertThat(loads.get(0).spilling()).isFalse();
	}

	@Test
	void anOrdinaryLoadWhoseAnswersWobbleNeverSpills() {
		// Four clients on three endpoints (1.33 in flight each), answers of 10 ms give or
		// take 20%: the next level, with no traffic yet, is costed at this level's
		// lowest.
		java.util.SplittableRandom random = new java.util.SplittableRandom(40);
		for (int window = 0; window < 1_000; window++) {
			double latency = (8 + 4 * random.nextDouble()) * MS;
			Map<Integer, LevelSpill.Load> loads = this.spill.next(TWO_LEVELS, new double[] { latency, Double.NaN },
					new double[] { 4.0 / 3, 0 });
			assertThat(loads.get(0).spilling()).as("window %d", window).isFalse();
		}
	}

	@Test
	void oneSlowWindowDoesNotStartASpill() {
		this.spill.next(TWO_LEVELS, new double[] { 10 * MS, Double.NaN }, new double[] { 0.5, 0 });
		for (int window = 0; window < 10; window++) {
			// A GC pause every third window: queued and slow, but not for long.
			double latency = (window % 3 == 2) ? 100 * MS : 10 * MS;
			assertThat(this.spill.next(TWO_LEVELS, new double[] { latency, Double.NaN }, new double[] { 4, 0 })
				.get(0)
				.spilling()).as("window %d", window).isFalse();
		}
	}

	@Test
	void aQueueingLevelNoSlowerThanTheNextDoesNotStartSpilling() {
		// Backends that serve many at once: more in flight, the same latency.
		for (int window = 0; window < 20; window++) {
			Map<Integer, LevelSpill.Load> loads = this.spill.next(TWO_LEVELS, new double[] { 10 * MS, 12 * MS },
					new double[] { 8, 1 });
			assertThat(loads.get(0).spilling()).isFalse();
		}
	}

	@Test
	void aLevelWithoutANextLevelToTakeItDoesNotSpill() {
		for (int window = 0; window < 10; window++) {
			assertThat(
					this.spill.next(TWO_LEVELS, new double[] { 500 * MS, Double.NaN }, new double[] { 50, Double.NaN })
						.get(0)
						.spilling())
				.isFalse();
		}
	}

}
