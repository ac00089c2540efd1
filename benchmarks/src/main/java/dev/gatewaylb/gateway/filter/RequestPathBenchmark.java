package dev.gatewaylb.gateway.filter;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.balance.Algorithm;
import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.benchmarks.Fixtures;
import dev.gatewaylb.benchmarks.core.Load;
import dev.gatewaylb.benchmarks.spring.ChooseBenchmark;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.runtime.ServiceRuntimes;
import dev.gatewaylb.gateway.upstream.UpstreamObserver;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;

// In the package of the classes it measures, not under dev.gatewaylb.benchmarks: Attempt,
// its constructor and ExchangeLease's resolved and hold are package-private. The shaded
// jar loads this class and gateway-lb's with one class loader, so it has package access.
// No package-info here: gateway-lb-autoconfigure's makes the package @NullMarked, and a
// second package-info.class would collide with it in the shaded jar.

/**
 * What one request pays gateway-lb on the request path, beside Spring Cloud
 * LoadBalancer's {@code RoundRobinLoadBalancer.choose()} (what the same request pays for
 * balancing without gateway-lb) in the same class and run:
 * <ul>
 * <li>{@code requestPath}, {@code requestPathTwoThreads}: one exchange with one attempt,
 * as {@link AttemptFilter} and the service's client go through it: the exchange's lease
 * opened ({@code new ExchangeLease}, as {@link InFlightReleaseFilter} does), the
 * service's runtime looked up ({@link ServiceRuntimes#find}, one map read), the pick
 * (select on the runtime's snapshot, the fail-open check), a new {@link Attempt} that
 * claims the endpoint in flight, held by the lease, then the upstream client's callbacks:
 * {@code requestPrepared} (the header deadline; with retries on, the clock read for the
 * retry deadline and the request counted in the retry budget), {@code requestSent},
 * {@code responseReceived(200)} and {@code responseCompleted}, which settles the outcome
 * and credits the endpoint; and last the lease closed, which releases the claim. With two
 * threads both use one service, so its round-robin position, its endpoints' counters and
 * its retry budget are shared and contended;</li>
 * <li>{@code requestPathWithoutRetries}, a diagnostic: the same with
 * {@code retry.attempts: 0}. Its first attempt then reads no clock and counts nothing in
 * the retry budget, so the difference to {@code requestPath} is what those cost;</li>
 * <li>{@code leaseAlone}, a diagnostic: a lease opened and closed with no attempt. Its
 * allocation is the lease's, so that what the request path allocates besides the lease
 * can be read off the same run;</li>
 * <li>{@code sclbRoundRobin}, {@code sclbRoundRobinTwoThreads}: Spring Cloud
 * LoadBalancer's {@link RoundRobinLoadBalancer#choose}, set up and subscribed as
 * {@link ChooseBenchmark} does.</li>
 * </ul>
 * Targets: at most 150 ns per request, and at most one allocation besides the lease
 * ({@code gc.alloc.rate.norm} of {@code -prof gc}). With compressed oops (this
 * benchmark's 1 GiB heap) the lease is one object of 80 B (its current attempt is a field
 * updated through a {@code VarHandle}), which {@code leaseAlone} shows; the attempt is
 * one object of 64 B. A request that allocates nothing else allocates 144 B.
 * <p>
 * The services' runtimes are built as production builds them ({@link Fixtures#runtimes}),
 * once per trial, and every endpoint carries 0 to 3 requests in flight (seeded, as in
 * {@code PickBenchmark}), so least-requests compares real counts. Other algorithms run
 * with {@code -p algorithm=PEAK_EWMA}, for example; consistent hashing would pick with no
 * key here, since resolving the key needs an exchange.
 * <p>
 * Not measured: what the attempt filter does with the exchange (the endpoint's URL built,
 * exchange attributes written, the Reactor context that carries the attempt to the
 * client, the operators of the chain), and the routing filter and Reactor Netty
 * themselves. The load benchmark ({@code benchmarks/load/run.sh}) measures the whole
 * gateway.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
public class RequestPathBenchmark {

	@Benchmark
	public Object requestPath(Service service) {
		return request(service.runtimes);
	}

	@Benchmark
	@Threads(2)
	public Object requestPathTwoThreads(Service service) {
		return request(service.runtimes);
	}

	@Benchmark
	public Object requestPathWithoutRetries(WithoutRetries service) {
		return request(service.runtimes);
	}

	@Benchmark
	public Object leaseAlone(Lone service) {
		ExchangeLease lease = new ExchangeLease(service.runtimes, null);
		lease.close();
		return lease;
	}

	@Benchmark
	public @Nullable Object sclbRoundRobin(Peer peer, ChooseBenchmark.Exchange exchange) {
		return exchange.choose(peer.roundRobin);
	}

	@Benchmark
	@Threads(2)
	public @Nullable Object sclbRoundRobinTwoThreads(Peer peer, ChooseBenchmark.Exchange exchange) {
		return exchange.choose(peer.roundRobin);
	}

	/**
	 * One exchange of one attempt, from the lease's opening to its closing. Returns the
	 * attempt, so that it and its lease escape as they do in the gateway (the exchange
	 * keeps them) and the JIT cannot take their allocations away.
	 */
	/**
	 * The connection's event loop the client hands the observer: only a service that
	 * hedges schedules on it, so this one never runs a task or starts its thread.
	 */
	private static final EventLoop EVENT_LOOP = new DefaultEventLoop();

	private static Object request(ServiceRuntimes runtimes) {
		ExchangeLease lease = new ExchangeLease(runtimes, null);
		ServiceRuntime runtime = runtimes.find(Fixtures.SERVICE);
		if (runtime == null) {
			throw new IllegalStateException("service " + Fixtures.SERVICE + " has no runtime");
		}
		lease.resolved(runtime);
		Attempt attempt = pick(lease, runtime);
		// The service's client reports through the observer in the request's context.
		UpstreamObserver observer = attempt;
		observer.requestPrepared(EVENT_LOOP);
		observer.requestSent();
		observer.responseReceived(200);
		observer.responseCompleted();
		lease.close();
		return attempt;
	}

	/**
	 * The first attempt's pick as {@link AttemptFilter} makes it. Its step that avoids
	 * endpoints already tried reads an attempt count of 0 and goes no further.
	 */
	private static Attempt pick(ExchangeLease lease, ServiceRuntime runtime) {
		Snapshot<Member> snapshot = runtime.snapshot();
		int index = snapshot.select(null);
		runtime.noteFailOpen(snapshot);
		if (index < 0) {
			throw new IllegalStateException("no endpoint to pick");
		}
		Attempt attempt = new Attempt(snapshot.claim(index), snapshot.ewmaDecayNanos(), lease, runtime,
				snapshot.value(index));
		lease.hold(attempt);
		return attempt;
	}

	/**
	 * Service {@code bench}'s runtime, with the built-in defaults but the algorithm (one
	 * retry, so the first attempt reads the clock), and its endpoints' load.
	 */
	@State(Scope.Benchmark)
	public static class Service {

		@Param({ "ROUND_ROBIN", "LEAST_REQUESTS" })
		public Algorithm algorithm;

		@Param({ "3", "1000" })
		public int endpoints;

		ServiceRuntimes runtimes;

		private Load load;

		@Setup
		public void setUp() {
			this.runtimes = Fixtures.runtimes(this.algorithm, Fixtures.instances(this.endpoints), properties());
			Snapshot<Member> snapshot = this.runtimes.snapshot(Fixtures.SERVICE);
			if (snapshot == null || snapshot.size() != this.endpoints) {
				throw new IllegalStateException("service " + Fixtures.SERVICE + " is not ready");
			}
			this.load = Load.apply(snapshot, 0);
		}

		Map<String, Object> properties() {
			return Map.of();
		}

		@TearDown
		public void tearDown() {
			this.load.release();
			this.runtimes.stop();
		}

	}

	/**
	 * {@link Service} with {@code retry.attempts: 0}.
	 */
	public static class WithoutRetries extends Service {

		@Override
		Map<String, Object> properties() {
			return Map.of("gateway.lb.defaults.retry.attempts", 0);
		}

	}

	/**
	 * Runtimes for a lease that makes no attempt.
	 */
	@State(Scope.Benchmark)
	public static class Lone {

		ServiceRuntimes runtimes;

		@Setup
		public void setUp() {
			this.runtimes = Fixtures.runtimes(Algorithm.ROUND_ROBIN, Fixtures.instances(3), Map.of());
		}

		@TearDown
		public void tearDown() {
			this.runtimes.stop();
		}

	}

	/**
	 * Spring Cloud LoadBalancer's round-robin over the same instances.
	 */
	@State(Scope.Benchmark)
	public static class Peer {

		@Param({ "3", "1000" })
		public int endpoints;

		RoundRobinLoadBalancer roundRobin;

		@Setup
		public void setUp() {
			List<ServiceInstance> instances = Fixtures.instances(this.endpoints);
			this.roundRobin = new RoundRobinLoadBalancer(Fixtures.suppliers(instances), Fixtures.SERVICE);
		}

	}

}
