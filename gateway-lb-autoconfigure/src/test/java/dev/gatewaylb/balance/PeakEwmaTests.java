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
	void movesTowardsAFasterSampleByTheElapsedShareOfTheDecay() {
		PeakEwma ewma = new PeakEwma();
		ewma.observe(100 * MS, 0, DECAY);
		ewma.observe(0, DECAY, DECAY);
		// The old value, decayed by e^-1 over one time constant, keeps weight e^-1 again.
		double decayed = 100 * MS * Math.exp(-1);
		assertThat(ewma.cost(DECAY, DECAY)).isCloseTo(decayed * Math.exp(-1), within(0.01 * MS));
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
