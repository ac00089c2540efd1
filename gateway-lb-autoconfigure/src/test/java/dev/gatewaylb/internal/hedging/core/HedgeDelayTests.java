package dev.gatewaylb.internal.hedging.core;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class HedgeDelayTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	@Test
	void isUnknownUntilTheWindowHoldsEnoughSamplesForItsPercentile() {
		HedgeDelay delay = new HedgeDelay(0.05, MS);
		assertThat(HedgeDelay.minSamples(0.05)).isEqualTo(200);
		for (int i = 0; i < 199; i++) {
			delay.record(10 * MS);
		}
		delay.roll();
		assertThat(delay.delayNanos()).isEqualTo(HedgeDelay.UNKNOWN);
		delay.record(10 * MS);
		delay.roll();
		assertThat(delay.samplesInWindow()).isEqualTo(200);
		assertThat(delay.delayNanos()).isCloseTo(10 * MS, within(MS / 10));
	}

	@ParameterizedTest(name = "max-extra-load {0}: at least {1} samples")
	@CsvSource({ "0.05, 200", "0.01, 1000", "0.1, 100", "0.5, 20", "1, 20", "0.3, 34" })
	void wantsTenSamplesBeyondThePercentileAndNeverFewerThanTwenty(double maxExtraLoad, long samples) {
		assertThat(HedgeDelay.minSamples(maxExtraLoad)).isEqualTo(samples);
	}

	@Test
	void waitsForThePercentileOneMinusMaxExtraLoad() {
		HedgeDelay p95 = new HedgeDelay(0.05, 0);
		HedgeDelay p80 = new HedgeDelay(0.2, 0);
		// 1 to 1000 ms, each once: p95 is 950 ms, p80 800 ms.
		for (int millis = 1; millis <= 1000; millis++) {
			p95.record(millis * MS);
			p80.record(millis * MS);
		}
		p95.roll();
		p80.roll();
		// Two significant digits: within 1%.
		assertThat(p95.delayNanos()).isCloseTo(950 * MS, within(10 * MS));
		assertThat(p80.delayNanos()).isCloseTo(800 * MS, within(8 * MS));
	}

	@Test
	void neverWaitsLessThanTheMinimum() {
		HedgeDelay delay = new HedgeDelay(0.05, 5 * MS);
		for (int i = 0; i < 1000; i++) {
			delay.record(MS / 2);
		}
		delay.roll();
		assertThat(delay.delayNanos()).isEqualTo(5 * MS);
	}

	@Test
	void forgetsAnIntervalOnceItLeftTheWindow() {
		HedgeDelay delay = new HedgeDelay(0.05, 0);
		for (int i = 0; i < 1000; i++) {
			delay.record(100 * MS);
		}
		delay.roll();
		assertThat(delay.delayNanos()).isCloseTo(100 * MS, within(MS));
		// Faster answers from now on: the slow interval weighs until it leaves.
		for (int interval = 1; interval < HedgeDelay.WINDOW_INTERVALS; interval++) {
			for (int i = 0; i < 1000; i++) {
				delay.record(10 * MS);
			}
			delay.roll();
			assertThat(delay.delayNanos()).as("interval %d", interval).isCloseTo(100 * MS, within(MS));
		}
		for (int i = 0; i < 1000; i++) {
			delay.record(10 * MS);
		}
		delay.roll();
		assertThat(delay.samplesInWindow()).isEqualTo(1000L * HedgeDelay.WINDOW_INTERVALS);
		assertThat(delay.delayNanos()).isCloseTo(10 * MS, within(MS / 10));
		// An idle window empties, and the delay is unknown again.
		for (int interval = 0; interval < HedgeDelay.WINDOW_INTERVALS; interval++) {
			delay.roll();
		}
		assertThat(delay.samplesInWindow()).isZero();
		assertThat(delay.delayNanos()).isEqualTo(HedgeDelay.UNKNOWN);
	}

	@Test
	void followsASporadicallySlowServiceToItsFastAnswers() {
		// 3% of answers take 500 ms, the others 4 to 6 ms: p95 is a fast answer.
		HedgeDelay delay = new HedgeDelay(0.05, 0);
		Random random = new Random(7);
		for (int i = 0; i < 5000; i++) {
			delay.record((random.nextInt(100) < 3) ? 500 * MS : (4 * MS + random.nextInt(2_000_000)));
		}
		delay.roll();
		assertThat(delay.delayNanos()).isBetween(4 * MS, 6 * MS + MS / 10);
	}

	@Test
	void keepsLatenciesBeyondAMinuteAsAMinute() {
		HedgeDelay delay = new HedgeDelay(1, 0);
		for (int i = 0; i < 20; i++) {
			delay.record(Long.MAX_VALUE);
		}
		delay.roll();
		assertThat(delay.delayNanos()).isCloseTo(TimeUnit.MINUTES.toNanos(1), within(TimeUnit.SECONDS.toNanos(1)));
	}

	@Test
	void recordsFromManyThreadsWhileOneRolls() throws Exception {
		// HdrHistogram's self-resizing concurrent histograms spin forever when writers
		// grow them at once; this one has a fixed range. 3% of values far above the rest
		// is what made the packed recorder hang within seconds.
		HedgeDelay delay = new HedgeDelay(0.05, 0);
		java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
		java.util.concurrent.atomic.AtomicLong recorded = new java.util.concurrent.atomic.AtomicLong();
		Thread[] writers = new Thread[3];
		for (int i = 0; i < writers.length; i++) {
			Random random = new Random(i);
			writers[i] = new Thread(() -> {
				while (!stop.get()) {
					delay.record((random.nextInt(100) < 3) ? (500 + random.nextInt(1000)) * MS
							: 5 * MS + random.nextInt(3_000_000));
					recorded.incrementAndGet();
				}
			});
			writers[i].start();
		}
		// Fewer rolls than the window has intervals, so that it keeps every sample.
		for (int roll = 0; roll < HedgeDelay.WINDOW_INTERVALS - 2; roll++) {
			Thread.sleep(20);
			delay.roll();
		}
		stop.set(true);
		for (Thread writer : writers) {
			writer.join(TimeUnit.SECONDS.toMillis(10));
			assertThat(writer.isAlive()).as("a writer still recording 10 s after the stop").isFalse();
		}
		delay.roll();
		assertThat(recorded.get()).isGreaterThan(1000);
		assertThat(delay.samplesInWindow()).as("every sample recorded, none lost or counted twice")
			.isEqualTo(recorded.get());
		assertThat(delay.delayNanos()).isBetween(5 * MS, 8 * MS + MS / 10);
	}

	@Test
	void rejectsALoadOutsideItsRange() {
		assertThatIllegalArgumentException().isThrownBy(() -> new HedgeDelay(0, 0));
		assertThatIllegalArgumentException().isThrownBy(() -> new HedgeDelay(1.01, 0));
		assertThatIllegalArgumentException().isThrownBy(() -> new HedgeDelay(Double.NaN, 0));
	}

}
