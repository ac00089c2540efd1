package dev.gatewaylb.split;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.gatewaylb.balance.StableHash;
import org.jspecify.annotations.Nullable;

/**
 * A compiled traffic split: one weighted choice among target services, stateless and
 * deterministic.
 * <p>
 * A key's slot is its {@link StableHash} modulo the total weight (as an unsigned 64-bit
 * number), and the slot is walked over the targets' cumulative weights in configuration
 * order: with stable 95 and canary 5, slots 0 to 94 go to stable and 95 to 99 to canary.
 * The same key always gets the same target, on every replica.
 * <p>
 * Keeping the total constant bounds what a weight change moves: 95/5 to 90/10 moves
 * exactly the keys of slots 90 to 94, from stable to canary, and no other; 100/0 to 0/100
 * moves every key. Changing the total changes the modulus and reshuffles every key: 95/5
 * to 95/10 sends some canary sessions back to stable. Immutable and thread-safe; two
 * splits are equal when their names and targets, in order, are.
 */
public final class Split {

	private final String name;

	private final List<Target> targets;

	private final long[] cumulative;

	private final long totalWeight;

	private Split(String name, List<Target> targets) {
		this.name = name;
		this.targets = List.copyOf(targets);
		this.cumulative = new long[targets.size()];
		long total = 0;
		for (int i = 0; i < targets.size(); i++) {
			total += targets.get(i).weight();
			this.cumulative[i] = total;
		}
		this.totalWeight = total;
	}

	/**
	 * Compiles a split.
	 * @param name the split's name
	 * @param targets the targets in order
	 * @return the split
	 * @throws IllegalArgumentException when there is no target, a service appears twice,
	 * or the weights sum to 0
	 */
	public static Split of(String name, List<Target> targets) {
		Objects.requireNonNull(name, "name");
		List<String> seen = new ArrayList<>();
		long total = 0;
		for (Target target : targets) {
			if (seen.contains(target.service())) {
				throw new IllegalArgumentException(
						"targets: " + target.service() + " twice (expected: distinct services)");
			}
			seen.add(target.service());
			total += target.weight();
		}
		if (total == 0) {
			throw new IllegalArgumentException("targets: " + targets + " (expected: weights summing to more than 0)");
		}
		return new Split(name, targets);
	}

	/**
	 * Returns the split's name, the host of {@code lb://<name>}.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the targets in configuration order.
	 * @return the targets, unmodifiable
	 */
	public List<Target> targets() {
		return this.targets;
	}

	/**
	 * Returns the index of the target a key goes to. Allocates nothing.
	 * @param key the request's affinity key
	 * @return an index into {@link #targets()}
	 */
	public int pick(CharSequence key) {
		return slotTarget(slot(StableHash.hash(key)));
	}

	/**
	 * Returns the index of the target named {@code service}.
	 * @param service a service id, matched case-insensitively
	 * @return the index, or -1 if the service is not a target of this split
	 */
	public int indexOf(String service) {
		for (int i = 0; i < this.targets.size(); i++) {
			if (this.targets.get(i).service().equalsIgnoreCase(service)) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Returns the slot of a hash: the hash as an unsigned number modulo the total weight.
	 * @param hash a {@link StableHash} value
	 * @return the slot, in {@code [0, total weight)}
	 */
	long slot(long hash) {
		return Long.remainderUnsigned(hash, this.totalWeight);
	}

	private int slotTarget(long slot) {
		int i = 0;
		// Targets are few; a walk beats a binary search. Weight-0 targets are skipped
		// because their cumulative weight equals the previous one.
		while (slot >= this.cumulative[i]) {
			i++;
		}
		return i;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		// The cumulative weights derive from the targets.
		return other instanceof Split that && this.name.equals(that.name) && this.targets.equals(that.targets);
	}

	@Override
	public int hashCode() {
		return 31 * this.name.hashCode() + this.targets.hashCode();
	}

	@Override
	public String toString() {
		return "Split[name=" + this.name + ", targets=" + this.targets + "]";
	}

	/**
	 * One target of a split.
	 *
	 * @param service the target's service id
	 * @param weight its weight, {@code >= 0}
	 */
	public record Target(String service, int weight) {

		public Target {
			Objects.requireNonNull(service, "service");
			if (weight < 0) {
				throw new IllegalArgumentException("weight: " + weight + " (expected: >= 0)");
			}
		}

	}

}
