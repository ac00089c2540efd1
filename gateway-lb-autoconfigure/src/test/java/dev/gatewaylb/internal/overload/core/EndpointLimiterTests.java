package dev.gatewaylb.internal.overload.core;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.InFlightGuard;
import dev.gatewaylb.internal.balance.Snapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limiter of one endpoint, fed window by window on a clock the test drives.
 */
class EndpointLimiterTests {

	private static final long MS = 1_000_000L;

	private final AtomicLong clock = new AtomicLong(1_000 * MS);

	private final Snapshot<Endpoint> snapshot = snapshot();

	private final EndpointState state = this.snapshot.state(0);

	private final LimitSamples samples = new LimitSamples();

	private Snapshot<Endpoint> snapshot() {
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS, (endpoint) -> endpoint, this.clock::get,
				SplittableRandom::new);
		balancer.update(List.of(Endpoint.of("10.0.0.1", 8080, 1)));
		return balancer.snapshot();
	}

	@Test
	void startsAtTheInitialLimitAndKeepsItUntilAWindowCloses() {
		ConcurrencyLimits limits = new ConcurrencyLimits(ConcurrencyLimits.Algorithm.GRADIENT2, 20, 1, 500);
		EndpointLimiter limiter = new EndpointLimiter(limits, this.samples, this.state, this.clock.get());
		assertThat(this.state.concurrencyLimit()).isEqualTo(20);
		for (int i = 0; i < EndpointLimiter.MIN_WINDOW_SAMPLES - 1; i++) {
			this.samples.add(20 * MS, false, this.state.inFlight());
		}
		this.clock.addAndGet(100 * MS);
		assertThat(limiter.update(this.samples, this.state, this.clock.get()))
			.as("nine samples, 100 ms: the window stays open")
			.isEqualTo(20);
	}

	@Test
	void gradient2LowersTheLimitWhenLatencyGrowsUnderLoad() {
		ConcurrencyLimits limits = new ConcurrencyLimits(ConcurrencyLimits.Algorithm.GRADIENT2, 20, 1, 500);
		EndpointLimiter limiter = new EndpointLimiter(limits, this.samples, this.state, this.clock.get());
		// Twenty windows at 20 ms teach the limit what normal is, with the endpoint busy
		// enough (in flight near the limit) to count.
		windows(limiter, 20, 20 * MS, 18);
		int learnt = this.state.concurrencyLimit();
		windows(limiter, 30, 80 * MS, learnt);
		assertThat(this.state.concurrencyLimit()).as("after 3 s at four times the latency, from %s", learnt)
			.isLessThan(learnt / 2);
	}

	/**
	 * An endpoint of four workers of 20 ms, kept at its limit: each window's time is the
	 * service time plus the wait behind the workers, so a limit above four shows as
	 * latency. After two seconds of light traffic, Gradient2 as configured falls from the
	 * initial 20 within a second of overload and then holds near the workers for 20 s
	 * rather than creeping up (the library's tolerance of 1.5 let it climb;
	 * ConcurrencyLimits#GRADIENT_RTT_TOLERANCE).
	 */
	@Test
	void gradient2FindsAnEndpointsWorkersAndStaysThere() {
		ConcurrencyLimits limits = new ConcurrencyLimits(ConcurrencyLimits.Algorithm.GRADIENT2, 20, 1, 500);
		EndpointLimiter limiter = new EndpointLimiter(limits, this.samples, this.state, this.clock.get());
		windows(limiter, 20, 20 * MS, 1);
		assertThat(this.state.concurrencyLimit()).as("light traffic says nothing of the limit").isEqualTo(20);
		List<Integer> seen = new ArrayList<>();
		for (int w = 0; w < 200; w++) {
			int limit = this.state.concurrencyLimit();
			windows(limiter, 1, 20 * MS * Math.max(4, limit) / 4, limit);
			seen.add(this.state.concurrencyLimit());
		}
		assertThat(seen.get(9)).as("after a second, the limits were %s", seen).isLessThanOrEqualTo(8);
		assertThat(seen.subList(10, 200)).as("the limits were %s", seen)
			.allSatisfy((limit) -> assertThat(limit).isBetween(4, 8));
	}

	@Test
	void gradient2LetsAQueueGrowAsTheRootOfTheLimit() {
		assertThat(ConcurrencyLimits.gradientQueueSize(1)).isOne();
		assertThat(ConcurrencyLimits.gradientQueueSize(6)).isOne();
		assertThat(ConcurrencyLimits.gradientQueueSize(16)).isEqualTo(2);
		assertThat(ConcurrencyLimits.gradientQueueSize(100)).isEqualTo(5);
		assertThat(ConcurrencyLimits.gradientQueueSize(500)).isEqualTo(11);
	}

	@Test
	void aimdBacksOffOnAWindowWithADrop() {
		ConcurrencyLimits limits = new ConcurrencyLimits(ConcurrencyLimits.Algorithm.AIMD, 100, 10, 500);
		EndpointLimiter limiter = new EndpointLimiter(limits, this.samples, this.state, this.clock.get());
		this.samples.add(-1, true, this.state.inFlight());
		this.clock.addAndGet(EndpointLimiter.MAX_WINDOW_NANOS);
		assertThat(limiter.update(this.samples, this.state, this.clock.get())).as("a window of one drop, no time")
			.isEqualTo(100);
		for (int i = 0; i < 10; i++) {
			this.samples.add(10 * MS, i == 0, this.state.inFlight());
		}
		this.clock.addAndGet(100 * MS);
		assertThat(limiter.update(this.samples, this.state, this.clock.get())).as("a window with a drop").isEqualTo(90);
	}

	@Test
	void keepsTheLimitWithinItsBoundsAndFixedNeverMoves() {
		ConcurrencyLimits limits = new ConcurrencyLimits(ConcurrencyLimits.Algorithm.VEGAS, 20, 15, 25);
		EndpointLimiter limiter = new EndpointLimiter(limits, this.samples, this.state, this.clock.get());
		windows(limiter, 30, 20 * MS, 20);
		assertThat(this.state.concurrencyLimit()).as("vegas at a steady latency").isBetween(20, 25);
		windows(limiter, 30, 400 * MS, 20);
		assertThat(this.state.concurrencyLimit()).as("vegas after its latency grew twentyfold").isEqualTo(15);
		EndpointLimiter fixed = new EndpointLimiter(new ConcurrencyLimits(ConcurrencyLimits.Algorithm.FIXED, 7, 1, 500),
				this.samples, this.state, this.clock.get());
		windows(fixed, 30, 400 * MS, 7);
		assertThat(this.state.concurrencyLimit()).isEqualTo(7);
	}

	/**
	 * Feeds {@code count} full windows of samples of {@code rtt}, each seen with
	 * {@code inFlight} requests in flight, 100 ms apart.
	 */
	private void windows(EndpointLimiter limiter, int count, long rtt, int inFlight) {
		for (int w = 0; w < count; w++) {
			List<InFlightGuard> held = new ArrayList<>();
			for (int i = 0; i < inFlight; i++) {
				held.add(this.snapshot.acquire(0));
			}
			for (int i = 0; i < EndpointLimiter.MIN_WINDOW_SAMPLES; i++) {
				this.samples.add(rtt, false, this.state.inFlight());
			}
			held.forEach(InFlightGuard::release);
			this.clock.addAndGet(100 * MS);
			limiter.update(this.samples, this.state, this.clock.get());
		}
	}

}
