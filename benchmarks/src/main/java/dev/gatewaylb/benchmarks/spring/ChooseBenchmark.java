package dev.gatewaylb.benchmarks.spring;

import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.benchmarks.Fixtures;
import dev.gatewaylb.internal.runtime.ServiceBalancer;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
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
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

/**
 * One {@code choose} through Spring Cloud LoadBalancer's API, the peers and gateway-lb
 * side by side in the same run:
 * <ul>
 * <li>{@code sclbRoundRobin}, {@code sclbRandom}: Spring Cloud LoadBalancer's
 * {@link RoundRobinLoadBalancer} and {@link RandomLoadBalancer};
 * <li>{@code gatewayLbChoose}: gateway-lb's {@link ServiceBalancer}, the bean a
 * {@code @LoadBalanced} client (any caller but the gateway's own routes) gets, with
 * round-robin: the same reactive {@code choose(Request)}, over a {@link ServiceRuntime}
 * built once, as the gateway builds it. It counts the pick (a guard acquired, which reads
 * the clock, and released at once) but holds no in-flight claim: nothing tells it when
 * such a request ends.
 * </ul>
 * What a gateway route pays gateway-lb per request is not here: routes no longer go
 * through {@code choose}, and
 * {@code dev.gatewaylb.internal.exchange.RequestPathBenchmark} (in
 * gateway-lb-autoconfigure's test tree) measures their pick, lease, attempt and release
 * beside {@code RoundRobinLoadBalancer.choose()}. Two rows of earlier versions are gone
 * with their subject: {@code gatewayLbRegistry} (the pick without the {@code Mono},
 * {@code BalancerRegistry.choose}, which no longer exists) and
 * {@code gatewayLbChooseResolvedSupplier} (a {@code ServiceBalancer} whose supplier
 * lookup was resolved up front; it now reads its runtime, not a supplier).
 * <p>
 * The peers get a supplier (a fixed {@code Flux.just(instances)}, as the caching supplier
 * returns) from a real bean factory ({@link Fixtures#suppliers}); gateway-lb's runtime
 * gets the same instances from its instance source. Every balancer gets the same
 * gateway-shaped request. The {@code Mono} is subscribed synchronously by a reusable
 * subscriber rather than {@code block()}, whose latch would dominate the cost being
 * compared.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class ChooseBenchmark {

	@Param({ "3", "1000" })
	public int endpoints;

	private RoundRobinLoadBalancer roundRobin;

	private RandomLoadBalancer random;

	private ServiceRuntimes runtimes;

	private ServiceBalancer gatewayLb;

	@Setup
	public void setUp() {
		List<ServiceInstance> instances = Fixtures.instances(this.endpoints);
		ObjectProvider<ServiceInstanceListSupplier> suppliers = Fixtures.suppliers(instances);
		this.roundRobin = new RoundRobinLoadBalancer(suppliers, Fixtures.SERVICE);
		this.random = new RandomLoadBalancer(suppliers, Fixtures.SERVICE);
		this.runtimes = Fixtures.runtimes(Algorithm.ROUND_ROBIN, instances, Map.of());
		this.gatewayLb = new ServiceBalancer(Fixtures.SERVICE, this.runtimes);
	}

	@TearDown
	public void tearDown() {
		this.runtimes.stop();
	}

	@Benchmark
	public @Nullable Object sclbRoundRobin(Exchange exchange) {
		return exchange.choose(this.roundRobin);
	}

	@Benchmark
	@Threads(2)
	public @Nullable Object sclbRoundRobinTwoThreads(Exchange exchange) {
		return exchange.choose(this.roundRobin);
	}

	@Benchmark
	public @Nullable Object sclbRandom(Exchange exchange) {
		return exchange.choose(this.random);
	}

	@Benchmark
	public @Nullable Object gatewayLbChoose(Exchange exchange) {
		return exchange.choose(this.gatewayLb);
	}

	@Benchmark
	@Threads(2)
	public @Nullable Object gatewayLbChooseTwoThreads(Exchange exchange) {
		return exchange.choose(this.gatewayLb);
	}

	/**
	 * One thread's request, as Spring Cloud Gateway's load-balancer filter builds it, and
	 * the subscriber that receives the response synchronously. Public, so that other
	 * benchmarks measure the peers the same way.
	 */
	@State(Scope.Thread)
	public static class Exchange implements CoreSubscriber<Object> {

		private Request<RequestDataContext> request;

		private @Nullable Object last;

		@Setup
		public void setUp() {
			HttpHeaders headers = new HttpHeaders();
			headers.add(HttpHeaders.ACCEPT, "*/*");
			RequestData data = new RequestData(HttpMethod.GET, URI.create("http://bench/orders"), headers,
					new LinkedMultiValueMap<>(), new HashMap<>());
			this.request = new DefaultRequest<>(new RequestDataContext(data, "default"));
		}

		/**
		 * Chooses through {@code balancer}, subscribing to its {@code Mono} on this
		 * thread.
		 * @param balancer the balancer
		 * @return the response, or {@code null} if the {@code Mono} completed empty
		 */
		public @Nullable Object choose(ReactorServiceInstanceLoadBalancer balancer) {
			this.last = null;
			balancer.choose(this.request).subscribe(this);
			return this.last;
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			subscription.request(Long.MAX_VALUE);
		}

		@Override
		public void onNext(Object value) {
			this.last = value;
		}

		@Override
		public void onError(Throwable error) {
			throw new IllegalStateException("choose failed", error);
		}

		@Override
		public void onComplete() {
		}

	}

}
