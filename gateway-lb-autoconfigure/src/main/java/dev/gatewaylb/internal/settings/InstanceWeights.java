package dev.gatewaylb.internal.settings;

import org.jspecify.annotations.Nullable;

/**
 * Reads an instance's weight from its discovery metadata.
 */
public final class InstanceWeights {

	/**
	 * The metadata key, the one Spring Cloud LoadBalancer's weighted supplier reads too.
	 */
	public static final String METADATA_KEY = "weight";

	/**
	 * The largest weight an instance is balanced with; a larger one is balanced with
	 * this, as HAProxy caps its weights (at 256): a registry value such as 2147483647, a
	 * typo or an overflow, must not take a service's whole traffic from endpoints of
	 * weight 1 to 10.
	 */
	public static final int MAX_WEIGHT = 1000;

	private InstanceWeights() {
	}

	/**
	 * Parses a metadata weight, not capped (see {@link #cap}).
	 * @param value the metadata value, or {@code null} when absent
	 * @return the weight, 1 when absent
	 * @throws IllegalArgumentException when the value is not an integer {@code >= 0}
	 */
	public static int parse(@Nullable String value) {
		if (value == null) {
			return 1;
		}
		try {
			int weight = Integer.parseInt(value.trim());
			if (weight >= 0) {
				return weight;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new IllegalArgumentException("weight: '" + value + "' (expected: an integer >= 0)");
	}

	/**
	 * Returns a weight capped at {@link #MAX_WEIGHT}.
	 * @param weight a parsed weight
	 * @return the weight balanced with
	 */
	public static int cap(int weight) {
		return Math.min(weight, MAX_WEIGHT);
	}

}
