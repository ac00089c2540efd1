package dev.gatewaylb.benchmarks.core;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import dev.gatewaylb.internal.balance.InFlightGuard;
import dev.gatewaylb.internal.balance.Snapshot;

/**
 * Uneven load on a snapshot, seeded: every endpoint gets a latency sample of 1 to 50 ms
 * and {@code minInFlight} to {@code minInFlight + 3} requests in flight, held until
 * {@link #release()}. Public for the request-path benchmark, which lives in the package
 * of the classes it measures.
 */
public final class Load {

	private final List<InFlightGuard> held = new ArrayList<>();

	private Load() {
	}

	/**
	 * Puts the load on every endpoint of {@code snapshot}.
	 * @param snapshot the snapshot
	 * @param minInFlight the fewest requests in flight an endpoint gets
	 * @return the load, to release
	 */
	public static Load apply(Snapshot<?> snapshot, int minInFlight) {
		Load load = new Load();
		SplittableRandom random = new SplittableRandom(42);
		for (int i = 0; i < snapshot.size(); i++) {
			InFlightGuard sample = snapshot.acquire(i);
			sample.recordLatency(System.nanoTime() + random.nextLong(1_000_000, 50_000_000));
			sample.release();
			int inFlight = minInFlight + random.nextInt(4);
			for (int j = 0; j < inFlight; j++) {
				load.held.add(snapshot.acquire(i));
			}
		}
		return load;
	}

	/**
	 * Releases every request in flight the load holds.
	 */
	public void release() {
		this.held.forEach(InFlightGuard::release);
		this.held.clear();
	}

}
