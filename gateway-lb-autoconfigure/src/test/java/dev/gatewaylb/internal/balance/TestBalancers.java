package dev.gatewaylb.internal.balance;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Builds balancers over plain endpoints with a clock and a random source the test drives.
 */
final class TestBalancers {

	final AtomicLong clock = new AtomicLong(1_000_000_000L);

	final SplittableRandom random = new SplittableRandom(42);

	Balancer<Endpoint> balancer(BalancerSettings settings, List<Endpoint> endpoints) {
		Balancer<Endpoint> balancer = new Balancer<>(settings, Function.identity(), this.clock::get, () -> this.random);
		balancer.update(endpoints);
		return balancer;
	}

	Balancer<Endpoint> balancer(Algorithm algorithm, int... weights) {
		return balancer(BalancerSettings.DEFAULTS.withAlgorithm(algorithm), endpoints(weights));
	}

	void advanceMillis(long millis) {
		this.clock.addAndGet(millis * 1_000_000L);
	}

	/**
	 * Returns endpoints a, b, c, ... on 10.0.0.1, .2, .3 with the given weights.
	 */
	static List<Endpoint> endpoints(int... weights) {
		List<Endpoint> endpoints = new ArrayList<>();
		for (int i = 0; i < weights.length; i++) {
			endpoints.add(endpoint(i, weights[i]));
		}
		return endpoints;
	}

	static Endpoint endpoint(int i, int weight) {
		return Endpoint.of("10.0.%d.%d".formatted(i / 250, i % 250 + 1), 8080, weight);
	}

	static char letter(int index) {
		return (char) ('a' + index);
	}

	/**
	 * Picks {@code count} times and returns the letters of the picked endpoints, each
	 * released at once.
	 */
	static String picks(Snapshot<Endpoint> snapshot, int count) {
		StringBuilder sequence = new StringBuilder();
		for (int i = 0; i < count; i++) {
			int index = snapshot.select(null);
			snapshot.acquire(index).release();
			sequence.append(letter(index));
		}
		return sequence.toString();
	}

	static int[] weights(String csv) {
		return java.util.Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
	}

}
