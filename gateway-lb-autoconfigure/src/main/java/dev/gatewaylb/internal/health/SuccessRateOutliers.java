package dev.gatewaylb.internal.health;

/**
 * The statistics of success-rate and failure-percentage ejection
 * ({@code health.passive.success-rate}, {@code health.passive.failure-percentage}) over
 * one interval's counts of a service's endpoints: pure functions, no state.
 * <p>
 * <b>Success rate</b>, Envoy's rule: over the endpoints with at least
 * {@code request-volume} requests in the interval, when there are at least
 * {@code minimum-hosts} of them, an endpoint whose success rate is below
 * {@code mean - stdev-factor x stdev} (the population standard deviation of their success
 * rates) is an outlier. Alone, that rule ejects someone in a service whose endpoints all
 * fail at the same small rate: the rates of five endpoints at 0.5% errors over 100-odd
 * requests each differ by chance alone, and the lowest of them often falls below the line
 * (a standard deviation of a few tenths of a percent makes the line a fraction of a
 * percent below the mean). So an endpoint is ejected only when, besides, a one-sided
 * binomial test says it fails more often than the service's endpoints pooled: the chance
 * of at least its failures in its requests, at the failure rate all of them would share
 * if none stood out (the pooled rate, its own requests included), is below
 * {@code 1 - confidence}. The pooled rate rather than the others' alone: the others' is
 * itself a noisy estimate, often near 0 in a healthy service, and against it a handful of
 * failures looks significant (on the seeded traffic of the tests, five endpoints at 0.5%,
 * 400 requests each: 95 intervals of 1,000 eject by the standard-deviation rule alone, 7
 * with the test against the others' rate, none against the pooled rate, which still finds
 * an endpoint at 10% in every interval).
 * <p>
 * <b>Failure percentage</b>, Envoy's other rule: an endpoint with at least
 * {@code request-volume} requests whose failures are {@code threshold} percent or more of
 * them, when at least {@code minimum-hosts} endpoints have the volume.
 */
public final class SuccessRateOutliers {

	private static final double[] LANCZOS = { 0.99999999999980993, 676.5203681218851, -1259.1392167224028,
			771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
			1.5056327351493116e-7 };

	private SuccessRateOutliers() {
	}

	/**
	 * Returns which endpoints are success-rate outliers.
	 * @param requests each endpoint's requests in the interval
	 * @param failures each endpoint's failures among them
	 * @param stdevFactor the factor of the standard deviation below the mean
	 * @param minimumHosts the endpoints with enough volume the rule needs
	 * @param requestVolume the requests an endpoint needs to count
	 * @param confidence the binomial test's confidence, 0 to skip the test
	 * @return per endpoint, whether it is an outlier
	 */
	public static boolean[] successRateOutliers(long[] requests, long[] failures, double stdevFactor, int minimumHosts,
			long requestVolume, double confidence) {
		int n = requests.length;
		boolean[] outliers = new boolean[n];
		int counted = 0;
		double sum = 0;
		long totalRequests = 0;
		long totalFailures = 0;
		for (int i = 0; i < n; i++) {
			if (requests[i] >= requestVolume && requests[i] > 0) {
				counted++;
				sum += successRate(requests[i], failures[i]);
				totalRequests += requests[i];
				totalFailures += failures[i];
			}
		}
		if (counted < minimumHosts || counted == 0) {
			return outliers;
		}
		double mean = sum / counted;
		double squares = 0;
		for (int i = 0; i < n; i++) {
			if (requests[i] >= requestVolume && requests[i] > 0) {
				double deviation = successRate(requests[i], failures[i]) - mean;
				squares += deviation * deviation;
			}
		}
		double threshold = mean - stdevFactor * Math.sqrt(squares / counted);
		for (int i = 0; i < n; i++) {
			if (requests[i] < requestVolume || requests[i] == 0 || successRate(requests[i], failures[i]) >= threshold) {
				continue;
			}
			outliers[i] = confidence <= 0
					|| atLeastChance(failures[i], requests[i], (double) totalFailures / totalRequests) < 1 - confidence;
		}
		return outliers;
	}

	/**
	 * Returns which endpoints are failure-percentage outliers.
	 * @param requests each endpoint's requests in the interval
	 * @param failures each endpoint's failures among them
	 * @param thresholdPercent the failure percentage that ejects
	 * @param minimumHosts the endpoints with enough volume the rule needs
	 * @param requestVolume the requests an endpoint needs to count
	 * @return per endpoint, whether it is an outlier
	 */
	public static boolean[] failurePercentageOutliers(long[] requests, long[] failures, int thresholdPercent,
			int minimumHosts, long requestVolume) {
		boolean[] outliers = new boolean[requests.length];
		int counted = 0;
		for (long count : requests) {
			if (count >= requestVolume && count > 0) {
				counted++;
			}
		}
		if (counted < minimumHosts) {
			return outliers;
		}
		for (int i = 0; i < requests.length; i++) {
			outliers[i] = requests[i] >= requestVolume && requests[i] > 0
					&& failures[i] * 100 >= (long) thresholdPercent * requests[i];
		}
		return outliers;
	}

	/**
	 * Returns a success rate in percent, as Envoy reports it.
	 * @param requests the requests
	 * @param failures the failures among them
	 * @return the rate, 0 to 100
	 */
	public static double successRate(long requests, long failures) {
		return 100.0 * (requests - failures) / requests;
	}

	/**
	 * Returns the chance of at least {@code failures} failures in {@code requests}
	 * independent requests that each fail with chance {@code rate}: the binomial upper
	 * tail, summed term by term from {@code failures} up until the terms no longer
	 * matter.
	 * @param failures the failures seen
	 * @param requests the requests
	 * @param rate the chance of one failure
	 * @return the chance, 0 to 1
	 */
	static double atLeastChance(long failures, long requests, double rate) {
		if (failures <= 0) {
			return 1;
		}
		if (rate <= 0) {
			return 0;
		}
		if (rate >= 1) {
			return 1;
		}
		double logRate = Math.log(rate);
		double logMiss = Math.log1p(-rate);
		// The largest term is near the mean: summing from `failures` when it is below the
		// mean would take most of the distribution, whose sum is 1 minus the lower tail.
		if (failures <= requests * rate) {
			return 1;
		}
		double logTerm = logChoose(requests, failures) + failures * logRate + (requests - failures) * logMiss;
		double sum = 0;
		for (long k = failures; k <= requests; k++) {
			double term = Math.exp(logTerm);
			sum += term;
			if (term < sum * 1e-12) {
				break;
			}
			// pmf(k + 1) / pmf(k) = (n - k) / (k + 1) * p / (1 - p)
			logTerm += Math.log((double) (requests - k) / (k + 1)) + logRate - logMiss;
		}
		return Math.min(1, sum);
	}

	private static double logChoose(long n, long k) {
		return logGamma(n + 1.0) - logGamma(k + 1.0) - logGamma(n - k + 1.0);
	}

	/**
	 * The logarithm of the gamma function, by Lanczos' approximation (g = 7, nine terms),
	 * accurate to about 15 digits for positive arguments.
	 */
	static double logGamma(double x) {
		double z = x - 1;
		double a = LANCZOS[0];
		double t = z + 7.5;
		for (int i = 1; i < LANCZOS.length; i++) {
			a += LANCZOS[i] / (z + i);
		}
		return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
	}

}
