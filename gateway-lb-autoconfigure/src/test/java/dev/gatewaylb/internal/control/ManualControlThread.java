package dev.gatewaylb.internal.control;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A {@link ControlThread} that runs nothing by itself: the test moves the injected clock
 * and calls {@link #runDue()}, which runs on the caller's thread every task due by the
 * clock's current time, and those they give in turn, in the order a real thread would: by
 * due time, then in the order given. A blocking {@link #call} runs at once, inline.
 * <p>
 * Tasks may be given from any thread (a probe's answer arrives on an event loop); they
 * wait for the next {@link #runDue()}. A periodic job runs at most once per
 * {@link #runDue()} however far the clock jumped, and is due again one interval after
 * that run, as with a fixed delay. A task that throws does not stop the others, as on the
 * real thread; {@link #runDue()} then throws the first failure once it has run them all,
 * so that a test never misses one.
 */
public final class ManualControlThread implements ControlThread {

	/**
	 * The wall-clock time of the request clock when the clock reads 0: 2027-01-15.
	 */
	public static final long EPOCH_MILLIS = 1_800_000_000_000L;

	private final AtomicLong clock;

	private final RequestClock requestClock = new RequestClock() {

		@Override
		public long nanoTime() {
			return ManualControlThread.this.clock.get();
		}

		@Override
		public long currentTimeMillis() {
			return EPOCH_MILLIS + ManualControlThread.this.clock.get() / 1_000_000;
		}

		@Override
		public Timer schedule(Runnable task, long delay, TimeUnit unit) {
			Job job = after(Duration.ofNanos(unit.toNanos(delay)), task);
			return job::cancel;
		}

	};

	private final PriorityQueue<Entry> queue = new PriorityQueue<>();

	private final List<String> jobs = new ArrayList<>();

	private long sequence;

	private boolean runningDue;

	private final List<Entry> started = new ArrayList<>();

	private boolean stopped;

	/**
	 * Creates the thread on a clock the test moves, directly or with {@link #advance}.
	 * @param clock the clock, in nanoseconds
	 */
	public ManualControlThread(AtomicLong clock) {
		this.clock = Objects.requireNonNull(clock, "clock");
	}

	@Override
	public synchronized void execute(Runnable task) {
		add(new Entry(this.clock.get(), this.sequence++, 0, "task", task));
	}

	@Override
	public synchronized Job every(String name, Duration interval, Runnable job) {
		if (interval.toNanos() <= 0) {
			throw new IllegalArgumentException("interval: " + interval + " (expected: > 0)");
		}
		Entry entry = new Entry(this.clock.get() + interval.toNanos(), this.sequence++, interval.toNanos(), name, job);
		entry.lastEndedNanos = this.clock.get();
		add(entry);
		this.started.add(entry);
		this.jobs.add(name + " every " + interval.toMillis() + "ms");
		return () -> cancel(entry);
	}

	@Override
	public synchronized Job after(Duration delay, Runnable task) {
		Entry entry = new Entry(this.clock.get() + Math.max(0, delay.toNanos()), this.sequence++, 0, "task", task);
		add(entry);
		return () -> cancel(entry);
	}

	@Override
	public <T> T call(Duration timeout, Supplier<T> task) {
		synchronized (this) {
			if (this.stopped) {
				throw new IllegalStateException("stopped");
			}
		}
		return task.get();
	}

	@Override
	public long nanoTime() {
		return this.clock.get();
	}

	/**
	 * Returns a request clock on the same clock: its timers are tasks of this thread, run
	 * by {@link #runDue()} when the test moves the clock past them; its wall clock is
	 * {@link #EPOCH_MILLIS} plus the clock.
	 */
	@Override
	public RequestClock requestClock() {
		return this.requestClock;
	}

	/**
	 * Runs every task due by the clock's current time, and the tasks those give that are
	 * due too, on the caller's thread. Called from within a task, does nothing: the outer
	 * call goes on with what the inner one would have run.
	 * @return how many tasks ran
	 */
	public int runDue() {
		synchronized (this) {
			if (this.runningDue) {
				return 0;
			}
			this.runningDue = true;
		}
		int ran = 0;
		RuntimeException failure = null;
		try {
			Entry entry;
			while ((entry = nextDue()) != null) {
				ran++;
				try {
					entry.task.run();
				}
				catch (RuntimeException | Error ex) {
					entry.failures++;
					if (failure == null) {
						failure = new IllegalStateException(entry.name + " failed", ex);
					}
				}
				synchronized (this) {
					entry.lastEndedNanos = this.clock.get();
					if (entry.intervalNanos > 0 && !entry.cancelled && !this.stopped) {
						// Due again one interval from now, which is never now: a clock
						// that jumped runs the job once, not once per interval it jumped.
						entry.dueNanos = this.clock.get() + entry.intervalNanos;
						entry.order = this.sequence++;
						this.queue.add(entry);
					}
				}
			}
		}
		finally {
			synchronized (this) {
				this.runningDue = false;
			}
		}
		if (failure != null) {
			throw failure;
		}
		return ran;
	}

	/**
	 * Moves the clock on and runs what is then due.
	 * @param by how far
	 * @return how many tasks ran
	 */
	public int advance(Duration by) {
		this.clock.addAndGet(by.toNanos());
		return runDue();
	}

	/**
	 * Returns how many tasks are waiting, due or not, jobs included.
	 * @return the count
	 */
	public synchronized int queued() {
		return this.queue.size();
	}

	/**
	 * Returns the jobs started so far, as {@code name every <interval>ms}, in the order
	 * they were started.
	 * @return the jobs, cancelled ones too
	 */
	public synchronized List<String> jobs() {
		return List.copyOf(this.jobs);
	}

	@Override
	public synchronized List<JobStatus> jobStatuses() {
		return this.started.stream()
			.filter((entry) -> !entry.cancelled)
			.map((entry) -> new JobStatus(entry.name, Duration.ofNanos(entry.intervalNanos), entry.lastEndedNanos,
					entry.failures))
			.toList();
	}

	/**
	 * Stops the thread: nothing runs any more.
	 */
	public synchronized void stop() {
		this.stopped = true;
		this.queue.clear();
	}

	private synchronized Entry nextDue() {
		Entry next = this.queue.peek();
		if (next == null || next.dueNanos - this.clock.get() > 0) {
			return null;
		}
		return this.queue.poll();
	}

	private void add(Entry entry) {
		if (!this.stopped) {
			this.queue.add(entry);
		}
	}

	private synchronized void cancel(Entry entry) {
		entry.cancelled = true;
		this.queue.remove(entry);
	}

	private static final class Entry implements Comparable<Entry> {

		long dueNanos;

		long order;

		final long intervalNanos;

		final String name;

		final Runnable task;

		boolean cancelled;

		long lastEndedNanos;

		long failures;

		Entry(long dueNanos, long order, long intervalNanos, String name, Runnable task) {
			this.dueNanos = dueNanos;
			this.order = order;
			this.intervalNanos = intervalNanos;
			this.name = name;
			this.task = Objects.requireNonNull(task, "task");
		}

		@Override
		public int compareTo(Entry other) {
			int byTime = Long.compare(this.dueNanos, other.dueNanos);
			return (byTime != 0) ? byTime : Long.compare(this.order, other.order);
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

}
