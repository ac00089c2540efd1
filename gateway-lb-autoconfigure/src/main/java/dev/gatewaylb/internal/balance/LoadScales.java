package dev.gatewaylb.internal.balance;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The weights the endpoints' own load reports give them, as the balancer keeps them:
 * integers in steps of 1/{@value #MEAN} of the mean weight. Integers, so that round-robin
 * builds its table from them as from configured weights, and picks compare loads
 * multiplied out; steps, so that a report moving a weight by a hair rebuilds nothing.
 */
final class LoadScales {

	/**
	 * The scale of the mean weight.
	 */
	static final int MEAN = 16;

	/**
	 * The largest scale: 64 times the mean, past any {@code max-weight-ratio} a service
	 * may set against its other endpoints.
	 */
	static final int MAX = MEAN * 64;

	private LoadScales() {
	}

	/**
	 * Returns the scales of weights relative to their mean.
	 * @param weights each address's weight, 1 the mean; NaN, 0 and below count as the
	 * smallest step
	 * @return the scales by address
	 */
	static Map<String, Integer> of(Map<String, Double> weights) {
		Map<String, Integer> scales = new HashMap<>(weights.size() * 2);
		weights.forEach((address, weight) -> {
			double scaled = (weight > 0) ? weight * MEAN : 1;
			scales.put(address, (int) Math.max(1, Math.min(MAX, Math.round(scaled))));
		});
		return Map.copyOf(scales);
	}

	/**
	 * Returns the scale of each endpoint in order, {@link #MEAN} for one not named, or
	 * {@code null} when no scale is given.
	 */
	static int @Nullable [] forEndpoints(Map<String, Integer> scales, List<Endpoint> endpoints) {
		if (scales.isEmpty()) {
			return null;
		}
		int[] of = new int[endpoints.size()];
		for (int i = 0; i < of.length; i++) {
			of[i] = scales.getOrDefault(endpoints.get(i).address(), MEAN);
		}
		return of;
	}

}
