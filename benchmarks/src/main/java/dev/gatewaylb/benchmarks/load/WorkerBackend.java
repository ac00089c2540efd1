package dev.gatewaylb.benchmarks.load;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The backends of the overload and locality scenarios: one process, one Reactor Netty
 * server per {@code port:workers:serviceMillis[:hopMillis]} argument on 127.0.0.1, each
 * serving like a thread-pool server: {@code workers} requests at a time, each for
 * {@code serviceMillis}, and a queue in front that nothing bounds. With
 * {@code hopMillis}, each answer leaves that much later than its worker is done, and the
 * worker takes its next request meanwhile: the round trip to another zone, which adds to
 * the latency and not to the backend's work. A request whose client went away keeps its
 * place and its worker's time, as in a servlet container that cannot tell: that is how
 * abandoned requests pile up in an overloaded backend, and what a concurrency limit in
 * front of it is for. The workers are timers, not threads, so the backends take almost no
 * CPU from the gateway they share a core with.
 * <p>
 * With {@code --report-load} first, every answer carries the backend's load as ORCA's
 * {@code endpoint-load-metrics}: {@code TEXT application_utilization=} its busy workers
 * over its workers, averaged over time (an exponentially weighted average with a
 * {@value #UTILIZATION_TAU_MILLIS} ms time constant), as a CPU utilization is a time
 * average: the share of its capacity in use, 0 when idle. The count at the instant of an
 * answer would include the answer's own worker, never read below one worker busy (a
 * backend of two would report 0.5 or 1.0), and an idle backend would never look idle. The
 * load-reports scenario's backends.
 * <p>
 * {@code GET /__stats} on any port answers {@code port served queued busy} lines; the
 * load script waits between runs until nothing is queued or busy. Runs until killed.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.gatewaylb.benchmarks.load.WorkerBackend
 * 18101:4:20 18102:4:20 18103:4:20}, or {@code 18111:2:10 18114:2:10:2} for a backend in
 * the gateway's zone and one in another zone 2 ms away.
 */
public final class WorkerBackend {

	private final int port;

	private final int workers;

	private final long serviceNanos;

	private final Duration hop;

	private final Scheduler timer;

	/**
	 * Guards the queue and the counts: a backend's bookkeeping, not a path under test.
	 */
	private final Object lock = new Object();

	private final ArrayDeque<Sinks.One<Double>> queue = new ArrayDeque<>();

	private int busy;

	private long served;

	static final long UTILIZATION_TAU_MILLIS = 250;

	private static final double UTILIZATION_TAU_NANOS = UTILIZATION_TAU_MILLIS * 1e6;

	/**
	 * The time average of the busy workers, and when it was last brought up to date.
	 * Guarded by the lock.
	 */
	private double busyAverage;

	private long averagedAtNanos = System.nanoTime();

	/**
	 * Whether each answer carries the backend's utilization.
	 */
	private final boolean reportLoad;

	private WorkerBackend(int port, int workers, long serviceMillis, long hopMillis, Scheduler timer,
			boolean reportLoad) {
		this.port = port;
		this.reportLoad = reportLoad;
		this.workers = workers;
		this.serviceNanos = TimeUnit.MILLISECONDS.toNanos(serviceMillis);
		this.hop = Duration.ofMillis(hopMillis);
		this.timer = timer;
	}

	public static void main(String[] args) {
		if (args.length == 0) {
			throw new IllegalArgumentException("usage: WorkerBackend port:workers:serviceMillis[:hopMillis]...");
		}
		Scheduler timer = Schedulers.newSingle("workers");
		Map<Integer, WorkerBackend> backends = new LinkedHashMap<>();
		boolean reportLoad = args[0].equals("--report-load");
		for (String arg : reportLoad ? Arrays.copyOfRange(args, 1, args.length) : args) {
			String[] fields = arg.split(":");
			if (fields.length != 3 && fields.length != 4) {
				throw new IllegalArgumentException("not port:workers:serviceMillis[:hopMillis]: " + arg);
			}
			int port = Integer.parseInt(fields[0]);
			long hopMillis = (fields.length == 4) ? Long.parseLong(fields[3]) : 0;
			backends.put(port, new WorkerBackend(port, Integer.parseInt(fields[1]), Long.parseLong(fields[2]),
					hopMillis, timer, reportLoad));
		}
		List<DisposableServer> servers = new ArrayList<>();
		for (WorkerBackend backend : backends.values()) {
			servers.add(HttpServer.create().host("127.0.0.1").port(backend.port).handle((request, response) -> {
				if (request.uri().startsWith("/__stats")) {
					return response.sendString(Mono.just(stats(backends))).then();
				}
				return backend.serve().flatMap((utilization) -> {
					if (backend.reportLoad) {
						response.header("endpoint-load-metrics", "TEXT application_utilization=" + utilization);
					}
					return response.header(HttpHeaderNames.CONTENT_TYPE, "text/plain")
						.header("X-Backend", String.valueOf(backend.port))
						.sendString(Mono.just("ok\n"))
						.then();
				});
			}).bindNow());
		}
		System.out.println("worker backends listening on 127.0.0.1: " + String.join(" ", args));
		servers.get(0).onDispose().block();
	}

	/**
	 * Queues a request; gives the backend's utilization when a worker has spent its
	 * service time on it, and the hop after that.
	 */
	private Mono<Double> serve() {
		Sinks.One<Double> done = Sinks.one();
		synchronized (this.lock) {
			this.queue.add(done);
		}
		dispatch();
		return this.hop.isZero() ? done.asMono() : done.asMono().delayElement(this.hop, this.timer);
	}

	/**
	 * Starts the queue's head on every free worker; a worker is free again a service time
	 * later, whether or not anyone still waits for its answer.
	 */
	private void dispatch() {
		while (true) {
			Sinks.One<Double> next;
			synchronized (this.lock) {
				if (this.busy >= this.workers || this.queue.isEmpty()) {
					return;
				}
				next = this.queue.poll();
				average(System.nanoTime());
				this.busy++;
			}
			this.timer.schedule(() -> {
				double utilization;
				synchronized (this.lock) {
					average(System.nanoTime());
					utilization = this.busyAverage / this.workers;
					this.busy--;
					this.served++;
				}
				next.tryEmitValue(utilization);
				dispatch();
			}, this.serviceNanos, TimeUnit.NANOSECONDS);
		}
	}

	/**
	 * Brings the time average of the busy workers up to {@code nowNanos}: the count held
	 * since the last change, weighed by how long it was held. Under the lock.
	 */
	private void average(long nowNanos) {
		long elapsed = nowNanos - this.averagedAtNanos;
		if (elapsed > 0) {
			double keep = Math.exp(-elapsed / UTILIZATION_TAU_NANOS);
			this.busyAverage = this.busyAverage * keep + this.busy * (1 - keep);
			this.averagedAtNanos = nowNanos;
		}
	}

	private static String stats(Map<Integer, WorkerBackend> backends) {
		StringBuilder text = new StringBuilder();
		for (WorkerBackend backend : backends.values()) {
			synchronized (backend.lock) {
				text.append(backend.port)
					.append(' ')
					.append(backend.served)
					.append(' ')
					.append(backend.queue.size())
					.append(' ')
					.append(backend.busy)
					.append('\n');
			}
		}
		return text.toString();
	}

}
