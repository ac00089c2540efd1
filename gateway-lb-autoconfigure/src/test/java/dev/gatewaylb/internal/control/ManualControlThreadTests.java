package dev.gatewaylb.internal.control;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The test thread runs what is due by its clock, in the order a real thread would.
 */
class ManualControlThreadTests {

	private static final long SECOND = 1_000_000_000L;

	private final AtomicLong clock = new AtomicLong(SECOND);

	private final ManualControlThread control = new ManualControlThread(this.clock);

	private final List<String> ran = new ArrayList<>();

	@Test
	void runsNothingUntilTheTestSaysSo() {
		this.control.execute(() -> this.ran.add("task"));
		assertThat(this.ran).isEmpty();
		assertThat(this.control.runDue()).isOne();
		assertThat(this.ran).containsExactly("task");
	}

	@Test
	void runsWhatIsDueByTimeThenInTheOrderGivenAndWhatTheyGiveInTurn() {
		this.control.after(Duration.ofSeconds(2), () -> this.ran.add("after 2s"));
		this.control.every("poll", Duration.ofSeconds(1), () -> this.ran.add("poll at " + this.clock.get() / SECOND));
		this.control.execute(() -> {
			this.ran.add("first");
			this.control.execute(() -> this.ran.add("given by first"));
		});
		this.control.execute(() -> this.ran.add("second"));
		this.control.runDue();
		assertThat(this.ran).containsExactly("first", "second", "given by first");
		this.ran.clear();
		this.control.advance(Duration.ofSeconds(1));
		this.control.advance(Duration.ofSeconds(1));
		// Both due at 3: the one-shot task was given first.
		assertThat(this.ran).containsExactly("poll at 2", "after 2s", "poll at 3");
	}

	@Test
	void runsAJobOnceWhenTheClockJumpsAndAgainOneIntervalLater() {
		this.control.every("tick", Duration.ofSeconds(1), () -> this.ran.add("tick at " + this.clock.get() / SECOND));
		this.control.advance(Duration.ofSeconds(61));
		this.control.advance(Duration.ofMillis(999));
		this.control.advance(Duration.ofMillis(1));
		assertThat(this.ran).containsExactly("tick at 62", "tick at 63");
		assertThat(this.control.jobs()).containsExactly("tick every 1000ms");
	}

	@Test
	void aCancelledJobRunsNoMore() {
		ControlThread.Job job = this.control.every("tick", Duration.ofSeconds(1), () -> this.ran.add("tick"));
		this.control.advance(Duration.ofSeconds(1));
		job.cancel();
		this.control.advance(Duration.ofSeconds(5));
		assertThat(this.ran).containsExactly("tick");
		assertThat(this.control.queued()).isZero();
	}

	@Test
	void aFailingTaskDoesNotStopTheOthersAndTheTestHearsOfIt() {
		this.control.execute(() -> {
			throw new IllegalArgumentException("broken");
		});
		this.control.execute(() -> this.ran.add("after the failure"));
		assertThatIllegalStateException().isThrownBy(this.control::runDue)
			.withMessage("task failed")
			.withCauseInstanceOf(IllegalArgumentException.class);
		assertThat(this.ran).containsExactly("after the failure");
	}

	@Test
	void aBlockingCallRunsInlineAndNothingRunsAfterStop() {
		assertThat(this.control.call(Duration.ofSeconds(1), () -> "inline")).isEqualTo("inline");
		this.control.execute(() -> this.ran.add("dropped"));
		this.control.stop();
		this.control.execute(() -> this.ran.add("dropped too"));
		assertThat(this.control.runDue()).isZero();
		assertThat(this.ran).isEmpty();
	}

}
