package dev.gatewaylb.internal.control;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

class ScheduledControlThreadTests {

	private final ScheduledControlThread control = new ScheduledControlThread();

	@AfterEach
	void stop() {
		this.control.stop();
	}

	@Test
	void runsTasksInTheOrderGivenOnOneDaemonThreadOfItsOwn() {
		List<String> ran = new CopyOnWriteArrayList<>();
		for (int i = 0; i < 100; i++) {
			int task = i;
			this.control.execute(() -> ran
				.add(task + " " + Thread.currentThread().getName() + " " + Thread.currentThread().isDaemon()));
		}
		List<String> expected = new java.util.ArrayList<>();
		for (int i = 0; i < 100; i++) {
			expected.add(i + " gateway-lb-control true");
		}
		assertThat(this.control.call(Duration.ofSeconds(10), () -> List.copyOf(ran))).isEqualTo(expected);
	}

	@Test
	void aFailingTaskIsNotFatalToTheOthersNorToAJobsSchedule() {
		AtomicInteger runs = new AtomicInteger();
		this.control.every("failing", Duration.ofMillis(1), () -> {
			runs.incrementAndGet();
			throw new IllegalStateException("expected by the test");
		});
		this.control.execute(() -> {
			throw new IllegalStateException("expected by the test");
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() >= 3);
		assertThat(this.control.call(Duration.ofSeconds(10), () -> "still running")).isEqualTo("still running");
	}

	@Test
	void aJobThatThrowsAnErrorKeepsItsScheduleAndCountsItsFailures() {
		AtomicInteger runs = new AtomicInteger();
		this.control.every("erring", Duration.ofMillis(1), () -> {
			runs.incrementAndGet();
			throw new NoClassDefFoundError("expected by the test");
		});
		this.control.execute(() -> {
			throw new StackOverflowError("expected by the test");
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() >= 3);
		ControlThread.JobStatus status = this.control.jobStatuses().get(0);
		assertThat(status.name()).isEqualTo("erring");
		assertThat(status.failures()).isGreaterThanOrEqualTo(3);
		assertThat(this.control.call(Duration.ofSeconds(10), () -> "still running")).isEqualTo("still running");
	}

	@Test
	void aJobsStatusSaysWhenItsLastRunEndedAndACancelledJobHasNone() {
		AtomicLong firstRunStarted = new AtomicLong();
		CountDownLatch ran = new CountDownLatch(2);
		ControlThread.Job job = this.control.every("ticking", Duration.ofMillis(1), () -> {
			firstRunStarted.compareAndSet(0, System.nanoTime());
			ran.countDown();
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> ran.getCount() == 0);
		ControlThread.JobStatus status = this.control.jobStatuses().get(0);
		assertThat(status.interval()).isEqualTo(Duration.ofMillis(1));
		assertThat(status.lastEndedNanos()).as("after a run, not when the job was started")
			.isGreaterThan(firstRunStarted.get());
		assertThat(status.failures()).isZero();
		job.cancel();
		assertThat(this.control.jobStatuses()).isEmpty();
	}

	@Test
	void aCancelledJobRunsNoMore() throws InterruptedException {
		CountDownLatch first = new CountDownLatch(1);
		AtomicInteger runs = new AtomicInteger();
		ControlThread.Job job = this.control.every("counting", Duration.ofMillis(1), () -> {
			runs.incrementAndGet();
			first.countDown();
		});
		assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();
		// A run in progress finishes; once the thread ran a task after the cancel, none
		// starts.
		this.control.call(Duration.ofSeconds(10), () -> {
			job.cancel();
			return null;
		});
		int settled = runs.get();
		CountDownLatch later = new CountDownLatch(1);
		this.control.after(Duration.ofMillis(20), later::countDown);
		assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(runs).hasValue(settled);
	}

	@Test
	void aCallFromTheThreadItselfRunsInline() {
		assertThat(this.control.call(Duration.ofSeconds(10),
				() -> this.control.call(Duration.ofSeconds(10), () -> Thread.currentThread().getName())))
			.isEqualTo("gateway-lb-control");
	}

	@Test
	void aCallThrowsWhatTheTaskThrewAndTimesOutOnABusyThread() throws InterruptedException {
		assertThatIllegalStateException().isThrownBy(() -> this.control.call(Duration.ofSeconds(10), () -> {
			throw new IllegalStateException("the task's own");
		})).withMessage("the task's own");
		CountDownLatch release = new CountDownLatch(1);
		this.control.execute(() -> {
			try {
				release.await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		try {
			assertThatIllegalStateException().isThrownBy(() -> this.control.call(Duration.ofMillis(50), () -> 1))
				.withMessage("gateway-lb-control did not run the task within 50 ms");
		}
		finally {
			release.countDown();
		}
	}

	@Test
	void nothingRunsAfterStop() throws InterruptedException {
		AtomicInteger runs = new AtomicInteger();
		CountDownLatch running = new CountDownLatch(1);
		this.control.execute(() -> {
			running.countDown();
			try {
				Thread.sleep(10_000);
			}
			catch (InterruptedException ex) {
				// stop() interrupts a running task.
				Thread.currentThread().interrupt();
			}
		});
		this.control.execute(runs::incrementAndGet);
		this.control.every("job", Duration.ofMillis(1), runs::incrementAndGet);
		assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
		this.control.stop();
		this.control.execute(runs::incrementAndGet);
		this.control.after(Duration.ZERO, runs::incrementAndGet);
		assertThat(this.control.isStopped()).isTrue();
		assertThat(runs).hasValue(0);
		assertThatIllegalStateException().isThrownBy(() -> this.control.call(Duration.ofSeconds(1), () -> 1))
			.withMessage("gateway-lb-control is stopped");
	}

}
