package dev.gatewaylb.internal.exchange;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DeadlineTests {

	private static final Duration THIRTY_SECONDS = Duration.ofSeconds(30);

	private static final long SECOND = 1_000_000_000L;

	@Test
	void givesTheFirstSendTheWholeTimeoutAndALaterOneWhatIsLeft() {
		assertThat(Deadline.headerTimeout(THIRTY_SECONDS, 0, 5 * SECOND)).hasSeconds(30);
		assertThat(Deadline.headerTimeout(THIRTY_SECONDS, 5 * SECOND, 17 * SECOND)).hasSeconds(18);
	}

	@Test
	void neverGivesALaterSendLessThanTheLeastWorthSending() {
		assertThat(Deadline.headerTimeout(THIRTY_SECONDS, SECOND, 40 * SECOND))
			.isEqualTo(Duration.ofNanos(Deadline.MIN_ATTEMPT_NANOS));
	}

	@Test
	void hasTimeLeftUntilLessThanTheLeastWorthSendingRemains() {
		assertThat(Deadline.hasTimeLeft(THIRTY_SECONDS, SECOND, 31 * SECOND - Deadline.MIN_ATTEMPT_NANOS)).isTrue();
		assertThat(Deadline.hasTimeLeft(THIRTY_SECONDS, SECOND, 31 * SECOND - Deadline.MIN_ATTEMPT_NANOS + 1))
			.isFalse();
		// Not sent yet, or the time was not needed: nothing is used up.
		assertThat(Deadline.hasTimeLeft(THIRTY_SECONDS, 0, 100 * SECOND)).isTrue();
	}

	@Test
	void aZeroTimeoutIsNoLimit() {
		assertThat(Deadline.headerTimeout(Duration.ZERO, SECOND, 100 * SECOND)).isNull();
		assertThat(Deadline.hasTimeLeft(Duration.ZERO, SECOND, 100 * SECOND)).isTrue();
	}

}
