package dev.gatewaylb.internal.health;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The upstream statuses that passive health counts as an endpoint's failure: every status
 * from 500 up ({@link #SERVER_ERRORS}, the default), or a chosen set of 5xx statuses such
 * as 502, 503 and 504, Envoy's "gateway failures". Only 5xx statuses can be chosen: a 4xx
 * is the client's doing, and counting it would let clients eject healthy endpoints.
 * <p>
 * Immutable. {@link #contains} reads two words built once: no lookup, no boxing, no
 * allocation on the request path.
 */
public final class FailureStatuses {

	/**
	 * Every status from 500 up, as passive health counted them before the set could be
	 * chosen.
	 */
	public static final FailureStatuses SERVER_ERRORS = new FailureStatuses(-1L, (1L << 36) - 1, true);

	private static final int FIRST = 500;

	private static final int LAST = 599;

	/**
	 * Bit {@code i} stands for status {@code 500 + i}.
	 */
	private final long low;

	/**
	 * Bit {@code i} stands for status {@code 564 + i}.
	 */
	private final long high;

	/**
	 * Whether a status above 599, which no standard defines, counts too: only for
	 * {@link #SERVER_ERRORS}, which counts whatever starts at 500.
	 */
	private final boolean beyond;

	private FailureStatuses(long low, long high, boolean beyond) {
		this.low = low;
		this.high = high;
		this.beyond = beyond;
	}

	/**
	 * Returns the set of {@code statuses}, or {@link #SERVER_ERRORS} when there are none.
	 * @param statuses 5xx statuses, duplicates allowed
	 * @return the set
	 * @throws IllegalArgumentException for a status outside 500 to 599
	 */
	public static FailureStatuses of(Collection<Integer> statuses) {
		if (statuses.isEmpty()) {
			return SERVER_ERRORS;
		}
		long low = 0;
		long high = 0;
		for (Integer status : statuses) {
			if (!isServerError(status)) {
				throw new IllegalArgumentException(status + " (expected: a 5xx status, " + FIRST + " to " + LAST + ")");
			}
			int bit = status - FIRST;
			if (bit < 64) {
				low |= 1L << bit;
			}
			else {
				high |= 1L << (bit - 64);
			}
		}
		return new FailureStatuses(low, high, false);
	}

	/**
	 * Returns whether a status can be chosen: 500 to 599.
	 * @param status the status, or {@code null}
	 * @return whether it is a 5xx status
	 */
	public static boolean isServerError(@Nullable Integer status) {
		return status != null && status >= FIRST && status <= LAST;
	}

	/**
	 * Returns whether passive health counts {@code status} as a failure.
	 * @param status an upstream's status
	 * @return whether it is in the set
	 */
	public boolean contains(int status) {
		int bit = status - FIRST;
		if (bit < 0) {
			return false;
		}
		if (bit < 64) {
			return (this.low & (1L << bit)) != 0;
		}
		if (bit <= LAST - FIRST) {
			return (this.high & (1L << (bit - 64))) != 0;
		}
		return this.beyond;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof FailureStatuses that && this.low == that.low && this.high == that.high
				&& this.beyond == that.beyond;
	}

	@Override
	public int hashCode() {
		return Long.hashCode(this.low) * 31 + Long.hashCode(this.high);
	}

	/**
	 * Returns {@code 5xx} for {@link #SERVER_ERRORS}, else the statuses in order, such as
	 * {@code [502, 503, 504]}.
	 */
	@Override
	public String toString() {
		if (this.beyond) {
			return "5xx";
		}
		List<Integer> statuses = new ArrayList<>();
		for (int status = FIRST; status <= LAST; status++) {
			if (contains(status)) {
				statuses.add(status);
			}
		}
		return statuses.toString();
	}

}
