package dev.gatewaylb.balance;

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

}
