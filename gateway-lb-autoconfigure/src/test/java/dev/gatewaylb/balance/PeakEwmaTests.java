package dev.gatewaylb.balance;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PeakEwmaTests {

	private static final long MS = 1_000_000L;

	private static final long DECAY = 10_000 * MS;

	private final TestBalancers balancers = new TestBalancers();

	@Test
	void jumpsToASlowerSampleAtOnce() {
		PeakEwma ewma = new PeakEwma();
		ewma.observe(10 * MS, 1_000 * MS, DECAY);
		ewma.observe(80 * MS, 1_000 * MS, DECAY);
		assertThat(ewma.cost(1_000 * MS, DECAY)).isCloseTo(80 * MS, within(1.0 * MS / 1000));
	}

	@Test
	void blendsAFasterSampleWithTheWeightTheElapsedTimeGivesIt() {
		PeakEwma ewma = new PeakEwma();
		ewma.observe(100 * MS, 0, DECAY);
		ewma.observe(0, DECAY, DECAY);
		// Finagle: 100 ms * e^-1 + 0 * (1 - e^-1), decayed once, not twice.
		assertThat(ewma.cost(DECAY, DECAY)).isCloseTo(100 * MS * Math.exp(-1), within(0.01 * MS));
		ewma.observe(20 * MS, DECAY + DECAY / 10, DECAY);
		double w = Math.exp(-0.1);
		assertThat(ewma.cost(DECAY + DECAY / 10, DECAY)).isCloseTo(100 * MS * Math.exp(-1) * w + 20 * MS * (1 - w),
				within(0.01 * MS));
	}

	@Test
	void makesAFailedEndpointCostlyHoweverFastItFailed() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.PEAK_EWMA, 1, 1).snapshot();
		InFlightGuard healthy = snapshot.acquire(0);
		InFlightGuard refused = snapshot.acquire(1);
		this.balancers.advanceMillis(20);
		healthy.recordLatency(this.balancers.clock.get());
		healthy.release();
		refused.recordFailure(1_000 * MS, this.balancers.clock.get());
		refused.release();
		assertThat(snapshot.state(1).latencyNanos(this.balancers.clock.get(), DECAY)).isEqualTo(1_000.0 * MS);
		for (int i = 0; i < 100; i++) {
			assertThat(snapshot.select(null)).isZero();
		}
	}

	@Test
	void decaysTowardsZeroWithoutSamples() {
		PeakEwma ewma = new PeakEwma();
		ewma.observe(50 * MS, 0, DECAY);
		assertThat(ewma.cost(DECAY, DECAY)).isCloseTo(50 * MS * Math.exp(-1), within(0.01 * MS));
		assertThat(ewma.cost(10 * DECAY, DECAY)).isLessThan(0.01 * MS);
	}

	@Test
	void prefersTheFasterEndpointAndPenalizesOneWithoutSamplesButBusy() {
		Snapshot<Endpoint> snapshot = this.balancers.balancer(Algorithm.PEAK_EWMA, 1, 1).snapshot();
		InFlightGuard slow = snapshot.acquire(0);
		InFlightGuard fast = snapshot.acquire(1);
		this.balancers.advanceMillis(5);
		fast.recordLatency(this.balancers.clock.get());
		fast.release();
		// a: busy, no sample yet; b: idle, 5 ms
		assertThat(snapshot.select(null)).isEqualTo(1);
		this.balancers.advanceMillis(95);
		slow.recordLatency(this.balancers.clock.get());
		slow.release();
		// a: 100 ms x 1 against b: ~5 ms x 1
		for (int i = 0; i < 100; i++) {
			assertThat(snapshot.select(null)).isEqualTo(1);
		}
		LeastRequestsTests.load(snapshot, new int[] { 0, 30 });
		// b now costs ~5 ms x 31 > a's 100 ms x 1
		assertThat(snapshot.select(null)).isZero();
	}

	@Test
	void comparesTwoEndpointsAsTheirDecayedCostsWouldAtAnyLaterInstant() {
		SplittableRandom random = new SplittableRandom(7);
		int compared = 0;
		int bCheaper = 0;
		for (int i = 0; i < 200_000; i++) {
			PeakEwma a = randomEwma(random);
			PeakEwma b = randomEwma(random);
			int inFlightA = random.nextInt(4) == 0 ? 0 : random.nextInt(1, 40);
			int inFlightB = random.nextInt(4) == 0 ? 0 : random.nextInt(1, 40);
			long now = 60_000 * MS + random.nextLong(0, 40_000 * MS);
			double costA = finagleCost(a, inFlightA, now);
			double costB = finagleCost(b, inFlightB, now);
			if (Math.abs(costA - costB) <= 1e-9 * Math.max(costA, costB)) {
				continue; // a tie up to rounding: either answer is right
			}
			compared++;
			boolean expected = costB < costA;
			bCheaper += expected ? 1 : 0;
			assertThat(PeakEwma.cheaper(b.packed(), inFlightB, a.packed(), inFlightA, DECAY))
				.as("b %s x %d against a %s x %d at %d ms", b.cost(now, DECAY), inFlightB, a.cost(now, DECAY),
						inFlightA, now / MS)
				.isEqualTo(expected);
		}
		assertThat(compared).isGreaterThan(150_000);
		assertThat(bCheaper).isBetween(compared / 3, compared * 2 / 3);
	}

	@Test
	void anUnsampledEndpointIsFreeWhenIdleAndDearWhenBusy() {
		PeakEwma sampled = new PeakEwma();
		sampled.observe(2_000 * MS, 0, DECAY);
		long fresh = new PeakEwma().packed();
		assertThat(PeakEwma.cheaper(fresh, 0, sampled.packed(), 0, DECAY)).isTrue();
		assertThat(PeakEwma.cheaper(fresh, 1, sampled.packed(), 50, DECAY)).isFalse();
		assertThat(PeakEwma.cheaper(sampled.packed(), 50, fresh, 1, DECAY)).isTrue();
		assertThat(PeakEwma.cheaper(fresh, 0, fresh, 0, DECAY)).isFalse();
		assertThat(PeakEwma.cheaper(fresh, 1, fresh, 2, DECAY)).isTrue();
	}

	/**
	 * An average sampled once or twice at a random time in the first minute, or never.
	 */
	private static PeakEwma randomEwma(SplittableRandom random) {
		PeakEwma ewma = new PeakEwma();
		if (random.nextInt(10) == 0) {
			return ewma;
		}
		long stamp = random.nextLong(0, 30_000 * MS);
		ewma.observe(random.nextLong(1, 500) * MS, stamp, DECAY);
		if (random.nextBoolean()) {
			// same millisecond now and then, so that the no-exp path is compared too
			long later = stamp + (random.nextBoolean() ? 0 : random.nextLong(0, 30_000 * MS));
			ewma.observe(random.nextLong(1, 500) * MS, later, DECAY);
		}
		return ewma;
	}

	/**
	 * Finagle's cost read with the clock, as {@link PowerOfTwoChoices} computes it when
	 * an endpoint ramps.
	 */
	private static double finagleCost(PeakEwma ewma, int inFlight, long now) {
		double latency = ewma.cost(now, DECAY);
		return (latency == 0 && inFlight != 0) ? PowerOfTwoChoices.UNKNOWN_LATENCY_PENALTY + inFlight
				: latency * (inFlight + 1);
	}

}
