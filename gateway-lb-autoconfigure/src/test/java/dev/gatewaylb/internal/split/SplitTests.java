package dev.gatewaylb.internal.split;

import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class SplitTests {

	private static final int KEYS = 100_000;

	@ParameterizedTest(name = "{0}/{1}")
	@CsvSource({ "95, 5", "90, 10", "50, 50", "1, 99" })
	void realisesTheWeightsWithinThreeStandardDeviations(int stable, int canary) {
		Split split = split(stable, canary);
		int[] counts = new int[2];
		for (String id : requestIds()) {
			counts[split.pick(id)]++;
		}
		// Each key goes to canary with probability p: the count is binomial.
		double p = canary / (double) (stable + canary);
		double mean = KEYS * p;
		double bound = 3 * Math.sqrt(KEYS * p * (1 - p));
		assertThat((double) counts[1]).isBetween(mean - bound, mean + bound);
		assertThat(counts[0] + counts[1]).isEqualTo(KEYS);
	}

	@Test
	void movesExactlyTheKeysOfTheGrownCanaryShareWhenTheTotalStays() {
		Split before = split(95, 5);
		Split after = split(90, 10);
		int moved = 0;
		for (String id : requestIds()) {
			int was = before.pick(id);
			int is = after.pick(id);
			long slot = before.slot(dev.gatewaylb.internal.balance.StableHash.hash(id));
			// Slots 90 to 94 change hands, stable to canary; every other slot stays.
			boolean inGrownShare = slot >= 90 && slot < 95;
			assertThat(is != was).as("key %s in slot %d", id, slot).isEqualTo(inGrownShare);
			if (is != was) {
				assertThat(was).isZero();
				assertThat(is).isOne();
				moved++;
			}
		}
		double bound = 3 * Math.sqrt(KEYS * 0.05 * 0.95);
		assertThat((double) moved).isBetween(KEYS * 0.05 - bound, KEYS * 0.05 + bound);
	}

	@Test
	void aRolloutLayoutGivesTheTargetExactlyItsPercentAndTheOthersTheRestInProportion() {
		Split split = Split.of("shop",
				List.of(new Split.Target("stable", 2), new Split.Target("legacy", 1), new Split.Target("canary", 40)));
		for (int percent : new int[] { 0, 5, 25, 50, 100 }) {
			Split layout = split.withShare(2, percent);
			assertThat(layout).isEqualTo(split);
			assertThat(layout.share(2)).as("canary at %d%%", percent).isCloseTo(percent / 100.0, within(1e-12));
			assertThat(layout.share(0)).isCloseTo((100 - percent) / 100.0 * 2 / 3, within(1e-12));
			assertThat(layout.share(1)).isCloseTo((100 - percent) / 100.0 / 3, within(1e-12));
		}
		int[] counts = new int[3];
		Split quarter = split.withShare(2, 25);
		for (String id : requestIds()) {
			counts[quarter.pick(id)]++;
		}
		for (int i = 0; i < 3; i++) {
			double p = quarter.share(i);
			double bound = 3 * Math.sqrt(KEYS * p * (1 - p));
			assertThat((double) counts[i]).as("target %d", i).isBetween(KEYS * p - bound, KEYS * p + bound);
		}
	}

	@Test
	void raisingARolloutStepMovesKeysOnlyToTheTargetAndARollbackReturnsEachToItsOwn() {
		Split split = Split.of("shop",
				List.of(new Split.Target("stable", 2), new Split.Target("legacy", 1), new Split.Target("canary", 0)));
		Split before = split.withShare(2, 5);
		Split after = split.withShare(2, 25);
		Split rolledBack = split.withShare(2, 0);
		// Stable owns slots 0-199 of 300 and legacy 200-299 at every step.
		int moved = 0;
		for (String id : requestIds()) {
			int was = before.pick(id);
			int is = after.pick(id);
			if (was != is) {
				assertThat(is).as("moved only to the canary").isEqualTo(2);
				moved++;
			}
			if (is == 2) {
				assertThat(rolledBack.pick(id)).as("back to the target whose range holds its slot")
					.isEqualTo((before.slot(dev.gatewaylb.internal.balance.StableHash.hash(id)) < 200) ? 0 : 1);
			}
			else {
				assertThat(rolledBack.pick(id)).as("untouched by the rollback").isEqualTo(is);
			}
		}
		double p = 0.20;
		double bound = 3 * Math.sqrt(KEYS * p * (1 - p));
		assertThat((double) moved).isBetween(KEYS * p - bound, KEYS * p + bound);
	}

	@Test
	void aRolloutNeedsOtherTargetsWithWeight() {
		Split split = Split.of("shop", List.of(new Split.Target("stable", 0), new Split.Target("canary", 100)));
		assertThatIllegalArgumentException().isThrownBy(() -> split.withShare(1, 50))
			.withMessageContaining("have no weight");
		assertThatIllegalArgumentException().isThrownBy(() -> split.withShare(0, 101));
		assertThatIllegalArgumentException().isThrownBy(() -> split.withShare(2, 50));
	}

	@Test
	void movesEveryKeyOnABlueGreenFlip() {
		Split blue = split(100, 0);
		Split green = split(0, 100);
		for (String id : requestIds()) {
			assertThat(blue.pick(id)).isZero();
			assertThat(green.pick(id)).isOne();
		}
	}

	@Test
	void reshufflesKeysWhenTheTotalChanges() {
		Split before = split(95, 5);
		Split grown = split(95, 10);
		int backToStable = 0;
		for (String id : requestIds()) {
			if (before.pick(id) == 1 && grown.pick(id) == 0) {
				backToStable++;
			}
		}
		// Growing the canary alone changes the modulus: some canary sessions go back.
		assertThat(backToStable).isGreaterThan(KEYS / 100);
	}

	@Test
	void skipsTargetsOfWeightZero() {
		Split split = Split.of("shop", List.of(new Split.Target("a", 0), new Split.Target("b", 3),
				new Split.Target("c", 0), new Split.Target("d", 1)));
		int[] counts = new int[4];
		for (String id : requestIds()) {
			counts[split.pick(id)]++;
		}
		assertThat(counts[0]).isZero();
		assertThat(counts[2]).isZero();
		assertThat(counts[1]).isGreaterThan(counts[3] * 2);
	}

	@Test
	void rejectsWeightsSummingToZeroAndDuplicateTargets() {
		assertThatIllegalArgumentException().isThrownBy(() -> split(0, 0))
			.withMessageContaining("summing to more than 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Split.of("s", List.of(new Split.Target("a", 1), new Split.Target("a", 2))))
			.withMessageContaining("a twice");
	}

	@Test
	void findsTargetsCaseInsensitively() {
		assertThat(split(1, 1).indexOf("CANARY")).isOne();
		assertThat(split(1, 1).indexOf("other")).isEqualTo(-1);
	}

	static Split split(int stable, int canary) {
		return Split.of("shop", List.of(new Split.Target("stable", stable), new Split.Target("canary", canary)));
	}

	/**
	 * Request ids shaped like Reactor Netty's: a connection id and a request counter.
	 */
	static List<String> requestIds() {
		SplittableRandom random = new SplittableRandom(11);
		List<String> ids = new java.util.ArrayList<>(KEYS);
		for (int i = 0; i < KEYS; i++) {
			ids.add(Integer.toHexString(random.nextInt()) + "-" + (1 + random.nextInt(50)));
		}
		return ids;
	}

}
