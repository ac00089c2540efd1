package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A backend that serves like a thread-pool server: a fixed number of workers, each busy
 * for a fixed service time per request, and a queue in front of them that nothing bounds.
 * A request whose client went away keeps its place in the queue and its worker's time, as
 * in a servlet container that cannot tell: that is how abandoned requests pile up in an
 * overloaded backend.
 */
final class WorkerBackend implements AutoCloseable {

	private final String name;

	private final long serviceNanos;

	private final Scheduler timer = Schedulers.newSingle("worker-backend");

	private final Object lock = new Object();

	private final ArrayDeque<Sinks.Empty<Void>> queue = new ArrayDeque<>();

	private int workers;

	private int busy;

	private final AtomicLong served = new AtomicLong();

	private final DisposableServer server;

	private WorkerBackend(String name, int workers, Duration serviceTime) {
		this.name = name;
		this.workers = workers;
		this.serviceNanos = serviceTime.toNanos();
		this.server = TestBackend.bind(HttpServer.create().host("127.0.0.1").handle((request, response) -> {
			Sinks.Empty<Void> done = Sinks.empty();
			synchronized (this.lock) {
				this.queue.add(done);
			}
			dispatch();
			return done.asMono()
				.then(response.header("X-Backend", this.name)
					.header("Content-Type", "text/plain")
					.sendString(reactor.core.publisher.Mono.just(this.name + "\n"))
					.then());
		}));
	}

	static WorkerBackend start(String name, int workers, Duration serviceTime) {
		return new WorkerBackend(name, workers, serviceTime);
	}

	/**
	 * Starts the queue's head on every free worker; a worker is free again a service time
	 * later, whether or not anyone still waits for its answer.
	 */
	private void dispatch() {
		while (true) {
			Sinks.Empty<Void> next;
			synchronized (this.lock) {
				if (this.busy >= this.workers || this.queue.isEmpty()) {
					return;
				}
				next = this.queue.poll();
				this.busy++;
			}
			this.timer.schedule(() -> {
				synchronized (this.lock) {
					this.busy--;
				}
				this.served.incrementAndGet();
				next.tryEmitEmpty();
				dispatch();
			}, this.serviceNanos, TimeUnit.NANOSECONDS);
		}
	}

	/**
	 * Changes the number of workers; requests being served finish.
	 * @param workers the new number
	 */
	void workers(int workers) {
		synchronized (this.lock) {
			this.workers = workers;
		}
		dispatch();
	}

	/**
	 * Returns the requests queued and not started.
	 */
	int queued() {
		synchronized (this.lock) {
			return this.queue.size();
		}
	}

	long served() {
		return this.served.get();
	}

	int port() {
		return this.server.port();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.timer.dispose();
	}

}
