package dev.gatewaylb.internal.balance;

import java.util.SplittableRandom;
import java.util.function.LongSupplier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PeakEwmaTests {

	private static final long MS = 1_000_000L;

	private static final long DECAY = 10_000 * MS;

	/**
	 * Forty days into the clock: past the int millisecond wrap.
	 */
	private static final long NOW = 40 * 86_400_000L * MS;

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
	void comparesTwoEndpointsAsTheirCostsReadWithTheClockCompare() {
		SplittableRandom random = new SplittableRandom(7);
		int compared = 0;
		int bCheaper = 0;
		int withoutClock = 0;
		for (int i = 0; i < 300_000; i++) {
			// after every stamp: a sample is never newer than the clock read that
			// compares it
			long now = NOW + 5_000 * MS + random.nextLong(0, 40_000 * MS);
			PeakEwma a = randomEwma(random, -1);
			PeakEwma b = randomEwma(random, (random.nextInt(8) == 0) ? (int) a.packed() : -1);
			int inFlightA = random.nextInt(4) == 0 ? 0 : random.nextInt(1, 40);
			int inFlightB = random.nextInt(4) == 0 ? 0 : random.nextInt(1, 40);
			double costA = finagleCost(a, inFlightA, now);
			double costB = finagleCost(b, inFlightB, now);
			if (Math.abs(costA - costB) <= 1e-9 * Math.max(costA, costB)) {
				continue; // a tie up to rounding: either answer is right
			}
			if (decayedToZeroWithinTheGap(a, b, now) || decayedToZeroWithinTheGap(b, a, now)) {
				// The documented exception: both idle for hours, the older average
				// decayed to 0 by now but within 600 decay times of the other's stamp.
				continue;
			}
			compared++;
			boolean expected = costB < costA;
			bCheaper += expected ? 1 : 0;
			boolean[] clockRead = new boolean[1];
			boolean cheaper = PeakEwma.cheaper(b.packed(), inFlightB, a.packed(), inFlightA, DECAY, () -> {
				clockRead[0] = true;
				return now;
			});
			withoutClock += clockRead[0] ? 0 : 1;
			assertThat(cheaper)
				.as("b %s x %d against a %s x %d at %d ms", b.cost(now, DECAY), inFlightB, a.cost(now, DECAY),
						inFlightA, now / MS)
				.isEqualTo(expected);
		}
		assertThat(compared).isGreaterThan(250_000);
		assertThat(bCheaper).isBetween(compared / 3, compared * 2 / 3);
		// most pairs are decided without the clock; stale and unsampled ones read it
		assertThat(withoutClock).isBetween(compared / 2, compared * 9 / 10);
	}

	@Test
	void readsTheClockForAnEndpointWithoutSamplesAndNeverFloodsABusyOne() {
		PeakEwma sampled = new PeakEwma();
		sampled.observe(2_000 * MS, NOW, DECAY);
		long fresh = new PeakEwma().packed();
		LongSupplier clock = () -> NOW + 1_000 * MS;
		assertThat(PeakEwma.cheaper(fresh, 0, sampled.packed(), 0, DECAY, clock)).isTrue();
		assertThat(PeakEwma.cheaper(fresh, 1, sampled.packed(), 50, DECAY, clock)).isFalse();
		assertThat(PeakEwma.cheaper(sampled.packed(), 50, fresh, 1, DECAY, clock)).isTrue();
		assertThat(PeakEwma.cheaper(fresh, 0, fresh, 0, DECAY, clock)).isFalse();
		assertThat(PeakEwma.cheaper(fresh, 1, fresh, 2, DECAY, clock)).isTrue();
	}

	@Test
	void givesTheClockedAnswerForStampsFarApartOrAcrossTheMillisecondWrap() {
		// Sampled three hours apart (over 600 decay times), and 30 days apart across
		// the int millisecond wrap (24.8 days): the older average decays to 0, and
		// Finagle's rule makes the busy endpoint cost the penalty, not 0.
		for (long ageMillis : new long[] { 3 * 3_600_000L, 30 * 86_400_000L }) {
			PeakEwma stale = new PeakEwma();
			stale.observe(50 * MS, NOW - ageMillis * MS, DECAY);
			PeakEwma recent = new PeakEwma();
			recent.observe(20 * MS, NOW, DECAY);
			LongSupplier clock = () -> NOW + 5 * MS;
			boolean expected = finagleCost(stale, 3, NOW + 5 * MS) < finagleCost(recent, 2, NOW + 5 * MS);
			assertThat(PeakEwma.cheaper(stale.packed(), 3, recent.packed(), 2, DECAY, clock)).as("%d ms", ageMillis)
				.isEqualTo(expected);
			assertThat(PeakEwma.cheaper(stale.packed(), 0, recent.packed(), 2, DECAY, clock))
				.as("idle, %d ms", ageMillis)
				.isTrue();
		}
	}

	/**
	 * An average sampled once or twice, or never. The stamps straddle the int millisecond
	 * wrap: {@link #NOW} is 40 days.
	 */
	private static PeakEwma randomEwma(SplittableRandom random, int sameStampMillisAs) {
		PeakEwma ewma = new PeakEwma();
		if (random.nextInt(10) == 0) {
			return ewma;
		}
		long stamp = switch (random.nextInt(10)) {
			case 0 -> NOW - random.nextLong(0, 4 * 3_600_000L) * MS; // up to hours stale
			default -> NOW - random.nextLong(0, 30_000) * MS;
		};
		boolean sameStamp = sameStampMillisAs != -1 && sameStampMillisAs != 0;
		if (sameStamp) {
			// the same millisecond as the other endpoint: the path without an exp
			stamp = NOW - ((int) (NOW / MS) - sameStampMillisAs) * MS;
		}
		ewma.observe(random.nextLong(1, 500) * MS, stamp, DECAY);
		if (!sameStamp && random.nextBoolean()) {
			ewma.observe(random.nextLong(1, 500) * MS, stamp + random.nextLong(0, 5_000) * MS, DECAY);
		}
		return ewma;
	}

	private static boolean decayedToZeroWithinTheGap(PeakEwma ewma, PeakEwma other, long now) {
		boolean sampled = (ewma.packed() >>> 32) != 0 && (other.packed() >>> 32) != 0;
		long gapMillis = Math.abs((int) ewma.packed() - (int) other.packed());
		return sampled && ewma.cost(now, DECAY) == 0 && gapMillis <= DECAY / MS * PeakEwma.MAX_GAP_DECAYS;
	}

	/**
	 * Finagle's cost read with the clock: the decayed average times in flight + 1, or the
	 * penalty for a busy endpoint without an average.
	 */
	private static double finagleCost(PeakEwma ewma, int inFlight, long now) {
		double latency = ewma.cost(now, DECAY);
		return (latency == 0 && inFlight != 0) ? PeakEwma.UNKNOWN_LATENCY_PENALTY + inFlight : latency * (inFlight + 1);
	}

}
