package dev.gatewaylb.internal.split;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.gatewaylb.internal.balance.StableHash;
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
 * to 95/10 sends some canary sessions back to stable.
 * <p>
 * A rollout gives one target a percent of the traffic with {@link #withShare}: each other
 * target keeps the head of its own range and hands the tail to the rolled-out target, in
 * proportion, so raising the percent moves keys only to that target and lowering it
 * returns each key to the very target it had before. Immutable and thread-safe; two
 * splits are equal when their names and targets, in order, are (a rollout's layout is
 * derived state).
 */
public final class Split {

	private final String name;

	private final List<Target> targets;

	/**
	 * The cumulative slot count at the end of each segment of the slot range.
	 */
	private final long[] cumulative;

	/**
	 * The target index of each segment: the identity, except in a rollout's layout.
	 */
	private final int[] segmentTargets;

	private final long totalWeight;

	private Split(String name, List<Target> targets) {
		this.name = name;
		this.targets = List.copyOf(targets);
		this.cumulative = new long[targets.size()];
		this.segmentTargets = new int[targets.size()];
		long total = 0;
		for (int i = 0; i < targets.size(); i++) {
			total += targets.get(i).weight();
			this.cumulative[i] = total;
			this.segmentTargets[i] = i;
		}
		this.totalWeight = total;
	}

	private Split(String name, List<Target> targets, long[] cumulative, int[] segmentTargets) {
		this.name = name;
		this.targets = targets;
		this.cumulative = cumulative;
		this.segmentTargets = segmentTargets;
		this.totalWeight = cumulative[cumulative.length - 1];
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
	 * Returns this split's layout when target {@code index} gets {@code percent} of the
	 * traffic and the others share the rest in their configured proportions (the target's
	 * own configured weight no longer counts).
	 * <p>
	 * Every other target {@code i} owns {@code 100 x weight(i)} slots, in configuration
	 * order, whatever the percent: it keeps the first {@code (100 - percent) x weight(i)}
	 * and the target takes the rest. The total never changes, so between two percents the
	 * only keys that move are those of the slots that changed hands, all between the
	 * target and the one other target whose range they are in.
	 * @param index the index of the target whose share is set
	 * @param percent its share, 0 to 100
	 * @return the layout, equal to this split
	 * @throws IllegalArgumentException when the other targets' weights sum to 0, or the
	 * index or percent is out of range
	 */
	public Split withShare(int index, int percent) {
		if (index < 0 || index >= this.targets.size() || percent < 0 || percent > 100) {
			throw new IllegalArgumentException("target " + index + " at " + percent + "% of " + this);
		}
		int others = 0;
		for (int i = 0; i < this.targets.size(); i++) {
			if (i != index && this.targets.get(i).weight() > 0) {
				others++;
			}
		}
		if (others == 0) {
			throw new IllegalArgumentException(
					"targets other than " + this.targets.get(index).service() + " have no weight (expected: some)");
		}
		long[] cumulative = new long[2 * others];
		int[] segmentTargets = new int[2 * others];
		long total = 0;
		int segment = 0;
		for (int i = 0; i < this.targets.size(); i++) {
			long weight = this.targets.get(i).weight();
			if (i == index || weight == 0) {
				continue;
			}
			total += weight * (100 - percent);
			cumulative[segment] = total;
			segmentTargets[segment++] = i;
			total += weight * percent;
			cumulative[segment] = total;
			segmentTargets[segment++] = index;
		}
		return new Split(this.name, this.targets, cumulative, segmentTargets);
	}

	/**
	 * Returns the share of the traffic target {@code index} gets.
	 * @param index an index into {@link #targets()}
	 * @return the share, 0 to 1
	 */
	public double share(int index) {
		long slots = 0;
		long previous = 0;
		for (int i = 0; i < this.cumulative.length; i++) {
			if (this.segmentTargets[i] == index) {
				slots += this.cumulative[i] - previous;
			}
			previous = this.cumulative[i];
		}
		return (double) slots / this.totalWeight;
	}

	/**
	 * Returns the index of the target a key goes to. Allocates nothing.
	 * @param key the request's sticky value, or its id
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
		// Segments are few; a walk beats a binary search. Empty segments (weight 0) are
		// skipped because their cumulative count equals the previous one.
		while (slot >= this.cumulative[i]) {
			i++;
		}
		return this.segmentTargets[i];
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
