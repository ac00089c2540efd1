package dev.gatewaylb.gateway.settings;

import org.jspecify.annotations.Nullable;

/**
 * Reads an instance's weight from its discovery metadata.
 */
public final class InstanceWeights {

	/**
	 * The metadata key, the one Spring Cloud LoadBalancer's weighted supplier reads too.
	 */
	public static final String METADATA_KEY = "weight";

	private InstanceWeights() {
	}

	/**
	 * Parses a metadata weight.
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

}
