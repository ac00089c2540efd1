package dev.gatewaylb.internal.health;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Success-rate and failure-percentage outliers over one interval's counts, on seeded
 * traffic: Envoy's standard-deviation rule, and what the binomial test adds to it.
 */
class SuccessRateOutliersTests {

	private static final int INTERVALS = 1_000;

	@Test
	void logGammaAndTheBinomialTailAreExact() {
		assertThat(SuccessRateOutliers.logGamma(1)).isCloseTo(0, within(1e-12));
		assertThat(SuccessRateOutliers.logGamma(5)).isCloseTo(Math.log(24), within(1e-12));
		assertThat(SuccessRateOutliers.logGamma(0.5)).isCloseTo(Math.log(Math.sqrt(Math.PI)), within(1e-12));
		assertThat(SuccessRateOutliers.logGamma(1001)).isCloseTo(5912.128178488163, within(1e-9));
		// At least 8 heads in 10 fair tosses: (45 + 10 + 1) / 1024.
		assertThat(SuccessRateOutliers.atLeastChance(8, 10, 0.5)).isCloseTo(56.0 / 1024, within(1e-12));
		assertThat(SuccessRateOutliers.atLeastChance(0, 10, 0.5)).isEqualTo(1);
		assertThat(SuccessRateOutliers.atLeastChance(1, 10, 0)).isEqualTo(0);
		// Below the mean the tail is at least a half: no evidence of anything.
		assertThat(SuccessRateOutliers.atLeastChance(2, 400, 0.01)).isEqualTo(1);
	}

	@Test
	void envoysRuleAloneEjectsFromServicesThatAllFailAlikeAndTheTestDoesNot() {
		SplittableRandom random = new SplittableRandom(42);
		int ejectingWithout = 0;
		int ejectingWith = 0;
		for (int interval = 0; interval < INTERVALS; interval++) {
			long[] requests = new long[5];
			long[] failures = new long[5];
			for (int i = 0; i < 5; i++) {
				requests[i] = 400;
				failures[i] = failures(random, 400, 0.005);
			}
			if (any(SuccessRateOutliers.successRateOutliers(requests, failures, 1.9, 5, 100, 0))) {
				ejectingWithout++;
			}
			if (any(SuccessRateOutliers.successRateOutliers(requests, failures, 1.9, 5, 100, 0.999))) {
				ejectingWith++;
			}
		}
		// Five endpoints at one 0.5% error rate, 400 requests each per interval.
		assertThat(ejectingWithout).as("intervals in which the stdev rule alone ejects, of %s", INTERVALS)
			.isGreaterThan(INTERVALS / 20);
		assertThat(ejectingWith).as("intervals in which it ejects with the binomial test, of %s", INTERVALS)
			.isLessThanOrEqualTo(INTERVALS / 200);
	}

	@Test
	void anEndpointFailingOneRequestInTenIsFoundInEveryInterval() {
		SplittableRandom random = new SplittableRandom(7);
		for (int interval = 0; interval < INTERVALS; interval++) {
			long[] requests = { 400, 400, 400, 400, 400 };
			long[] failures = new long[5];
			for (int i = 0; i < 5; i++) {
				failures[i] = failures(random, 400, (i == 2) ? 0.10 : 0.005);
			}
			boolean[] outliers = SuccessRateOutliers.successRateOutliers(requests, failures, 1.9, 5, 100, 0.999);
			assertThat(outliers).as("interval %s, failures %s", interval, java.util.Arrays.toString(failures))
				.containsExactly(false, false, true, false, false);
		}
	}

	@Test
	void endpointsBelowTheVolumeOrTooFewHostsAreNotJudged() {
		long[] requests = { 400, 400, 400, 400, 99 };
		long[] failures = { 0, 0, 0, 0, 99 };
		assertThat(SuccessRateOutliers.successRateOutliers(requests, failures, 1.9, 4, 100, 0.999)).containsOnly(false);
		assertThat(SuccessRateOutliers.successRateOutliers(requests, failures, 1.9, 5, 100, 0.999)).containsOnly(false);
		assertThat(SuccessRateOutliers.failurePercentageOutliers(requests, failures, 85, 4, 50)).containsExactly(false,
				false, false, false, true);
		assertThat(SuccessRateOutliers.failurePercentageOutliers(requests, failures, 85, 6, 50)).containsOnly(false);
		assertThat(SuccessRateOutliers.failurePercentageOutliers(new long[] { 100, 100 }, new long[] { 84, 85 }, 85, 1,
				50))
			.containsExactly(false, true);
	}

	private static long failures(SplittableRandom random, int requests, double rate) {
		long failed = 0;
		for (int i = 0; i < requests; i++) {
			if (random.nextDouble() < rate) {
				failed++;
			}
		}
		return failed;
	}

	private static boolean any(boolean[] values) {
		for (boolean value : values) {
			if (value) {
				return true;
			}
		}
		return false;
	}

}
