package dev.gatewaylb.internal.mirror;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

import dev.gatewaylb.actuate.GatewayLbReport.MirrorReport;
import dev.gatewaylb.actuate.GatewayLbReport.MismatchReport;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.Metered;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * One service's mirroring ({@code mirror}) as it goes: its settings, how many mirrored
 * requests are in flight, what became of each, and the last mismatches. The counts carry
 * over from each of the service's states to the next. Thread-safe without a lock:
 * counters are {@link LongAdder}s, the in-flight count one atomic, the mismatches a ring
 * of slots written by one increment and one set.
 */
public final class MirrorState implements Metered {

	/**
	 * The feature: a service's state.
	 */
	public static final Feature<MirrorSettings, MirrorState> FEATURE = new Feature<>() {

		@Override
		public Class<MirrorState> stateType() {
			return MirrorState.class;
		}

		@Override
		public MirrorState next(@Nullable MirrorState previous, MirrorSettings settings, Context service) {
			if (previous != null && previous.settings.equals(settings)) {
				return previous;
			}
			return new MirrorState(settings, (previous != null) ? previous.counts : new Counts());
		}

	};

	static final String MIRROR = "gateway.lb.mirror";

	private final MirrorSettings settings;

	private final Counts counts;

	private MirrorState(MirrorSettings settings, Counts counts) {
		this.settings = settings;
		this.counts = counts;
	}

	/**
	 * Returns a state with these settings and counts of its own: for tests.
	 * @param settings the settings
	 * @return the state
	 */
	static MirrorState of(MirrorSettings settings) {
		return new MirrorState(settings, new Counts());
	}

	/**
	 * Returns the settings the state was built from.
	 * @return the settings
	 */
	public MirrorSettings settings() {
		return this.settings;
	}

	/**
	 * How many mismatches the state remembers.
	 */
	public static final int RECENT = 20;

	/**
	 * Takes a place for one more mirrored request, unless {@code max} are in flight.
	 * @param max the most in flight
	 * @return whether a place was taken; when not, the request is counted as dropped
	 */
	public boolean tryAcquire(int max) {
		while (true) {
			int now = this.counts.inFlight.get();
			if (now >= max) {
				this.counts.dropped.increment();
				return false;
			}
			if (this.counts.inFlight.compareAndSet(now, now + 1)) {
				return true;
			}
		}
	}

	/**
	 * Gives a place back.
	 */
	public void release() {
		this.counts.inFlight.decrementAndGet();
	}

	/**
	 * Returns the mirrored requests in flight.
	 * @return the count
	 */
	public int inFlight() {
		return this.counts.inFlight.get();
	}

	/**
	 * Counts a request not mirrored: no place, a body too large or of unknown length, no
	 * shadow to send it to.
	 */
	public void dropped() {
		this.counts.dropped.increment();
	}

	/**
	 * Counts a mirrored request whose answer was compared and matched.
	 */
	public void matched() {
		this.counts.matched.increment();
	}

	/**
	 * Counts a mirrored request that failed (no answer from the shadow, or none from the
	 * primary to compare it with).
	 */
	public void failed() {
		this.counts.failed.increment();
	}

	/**
	 * Counts a mismatch and remembers it among the last {@value #RECENT}.
	 * @param mismatch what differed
	 */
	public void mismatched(Mismatch mismatch) {
		this.counts.mismatched.increment();
		long slot = this.counts.mismatches.getAndIncrement();
		this.counts.recent.set((int) (slot % RECENT), mismatch);
	}

	/**
	 * Returns the last mismatches, oldest first.
	 * @return at most {@value #RECENT}
	 */
	public List<Mismatch> recent() {
		long next = this.counts.mismatches.get();
		List<Mismatch> recent = new ArrayList<>(RECENT);
		for (long i = Math.max(0, next - RECENT); i < next; i++) {
			Mismatch mismatch = this.counts.recent.get((int) (i % RECENT));
			if (mismatch != null) {
				recent.add(mismatch);
			}
		}
		return recent;
	}

	/**
	 * Returns the counter of mirrored requests whose answers matched.
	 * @return the counter
	 */
	public LongAdder matchedCounter() {
		return this.counts.matched;
	}

	/**
	 * Returns the counter of mirrored requests whose answers differed.
	 * @return the counter
	 */
	public LongAdder mismatchedCounter() {
		return this.counts.mismatched;
	}

	/**
	 * Returns the counter of mirrored requests without two answers to compare.
	 * @return the counter
	 */
	public LongAdder failedCounter() {
		return this.counts.failed;
	}

	/**
	 * Returns the counter of requests not mirrored.
	 * @return the counter
	 */
	public LongAdder droppedCounter() {
		return this.counts.dropped;
	}

	/**
	 * One mismatch: the two statuses, what differed, and the path (no query string).
	 *
	 * @param primaryStatus the primary's status
	 * @param shadowStatus the shadow's status
	 * @param bodyDiffers whether the statuses' classes matched but the bodies did not
	 * @param path the request's path
	 * @param atMillis when it was found, epoch milliseconds
	 */
	public record Mismatch(int primaryStatus, int shadowStatus, boolean bodyDiffers, String path, long atMillis) {
	}

	/**
	 * Returns the actuator's section of the service's mirroring.
	 * @return the section, or {@code null} when the service is not mirrored
	 */
	public @Nullable MirrorReport report() {
		String target = this.settings.target();
		if (target == null) {
			return null;
		}
		List<MismatchReport> mismatches = recent().stream()
			.map((m) -> new MismatchReport(m.primaryStatus(), m.shadowStatus(), m.bodyDiffers(), m.path(),
					m.atMillis()))
			.toList();
		return new MirrorReport(target, this.settings.percent(),
				this.settings.compare().name().toLowerCase(Locale.ROOT), inFlight(), this.counts.matched.sum(),
				this.counts.mismatched.sum(), this.counts.failed.sum(), this.counts.dropped.sum(), mismatches);
	}

	@Override
	public List<Meter> register(MeterRegistry registry, String serviceId) {
		if (!this.settings.enabled()) {
			return List.of();
		}
		List<Meter> meters = new ArrayList<>(4);
		Map<String, LongAdder> mirrored = Map.of("match", this.counts.matched, "mismatch", this.counts.mismatched,
				"error", this.counts.failed, "dropped", this.counts.dropped);
		mirrored.forEach((outcome, count) -> meters.add(FunctionCounter.builder(MIRROR, count, LongAdder::sum)
			.tags("service", serviceId, "outcome", outcome)
			.description("Requests of the service mirrored to its shadow, by what their comparison found: the "
					+ "answers matched, differed, could not be compared (the shadow failed), or the request was "
					+ "not mirrored (no place among max-concurrent, a body too large)")
			.register(registry)));
		return meters;
	}

	/**
	 * The counts, carried from each state of a service to the next.
	 */
	private static final class Counts {

		final AtomicInteger inFlight = new AtomicInteger();

		final LongAdder matched = new LongAdder();

		final LongAdder mismatched = new LongAdder();

		final LongAdder failed = new LongAdder();

		final LongAdder dropped = new LongAdder();

		final AtomicLong mismatches = new AtomicLong();

		final AtomicReferenceArray<Mismatch> recent = new AtomicReferenceArray<>(RECENT);

	}

}
