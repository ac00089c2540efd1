package dev.gatewaylb.benchmarks.spring;

import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.benchmarks.Fixtures;
import dev.gatewaylb.config.GatewayLbPropertiesBinder;
import dev.gatewaylb.gateway.BalancerRegistry;
import dev.gatewaylb.gateway.ExchangeLease;
import dev.gatewaylb.gateway.GatewayLbSettings;
import dev.gatewaylb.gateway.LiveSettings;
import dev.gatewaylb.gateway.ServiceBalancer;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

/**
 * One {@code choose} through Spring Cloud LoadBalancer's API, the peers and gateway-lb
 * side by side in the same run:
 * <ul>
 * <li>{@code sclbRoundRobin}, {@code sclbRandom}: Spring Cloud LoadBalancer's
 * {@link RoundRobinLoadBalancer} and {@link RandomLoadBalancer};
 * <li>{@code gatewayLbChoose}: gateway-lb's {@link ServiceBalancer}, the bean the gateway
 * asks, with round-robin: the same reactive {@code choose(Request)}, plus the in-flight
 * guard handed to the exchange's lease as in the gateway;
 * <li>{@code gatewayLbRegistry}: the same pick without the reactive wrapper,
 * {@link BalancerRegistry#choose} on the instance list;
 * <li>{@code gatewayLbChooseResolvedSupplier}: a diagnostic, {@code gatewayLbChoose} with
 * a provider that returns the supplier without a bean-factory lookup. Spring Cloud's
 * balancers resolve the supplier once (a {@code SingletonSupplier}); the
 * {@link ServiceBalancer} asks its provider at every pick, and the difference between the
 * two rows is what that lookup costs.
 * </ul>
 * Every balancer gets the same supplier (a fixed {@code Flux.just(instances)}, as the
 * caching supplier returns) from a real bean factory, and the same gateway-shaped
 * request. The {@code Mono} is subscribed synchronously by a reusable subscriber rather
 * than {@code block()}, whose latch would dominate the cost being compared.
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

	private List<ServiceInstance> instances;

	private RoundRobinLoadBalancer roundRobin;

	private RandomLoadBalancer random;

	private ServiceBalancer gatewayLb;

	private BalancerRegistry registry;

	private ServiceBalancer gatewayLbResolved;

	@Setup
	public void setUp() {
		this.instances = Fixtures.instances(this.endpoints);
		Flux<List<ServiceInstance>> fixed = Flux.just(this.instances);
		DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
		beans.registerSingleton("supplier", new FixedSupplier(fixed));
		// A refreshed child context is frozen, which turns on its by-type name cache
		beans.freezeConfiguration();
		ObjectProvider<ServiceInstanceListSupplier> suppliers = beans
			.getBeanProvider(ServiceInstanceListSupplier.class);
		this.roundRobin = new RoundRobinLoadBalancer(suppliers, "bench");
		this.random = new RandomLoadBalancer(suppliers, "bench");
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.addFirst(new MapPropertySource("bench", Map.of("gateway.lb.defaults.algorithm", "round-robin")));
		LiveSettings settings = new LiveSettings(GatewayLbSettings.from(GatewayLbPropertiesBinder.bind(environment)));
		this.registry = new BalancerRegistry(settings, System::nanoTime);
		this.gatewayLb = new ServiceBalancer("bench", suppliers, this.registry);
		this.gatewayLbResolved = new ServiceBalancer("bench", new Resolved(suppliers.getObject()), this.registry);
	}

	@Benchmark
	public @Nullable Object sclbRoundRobin(Exchange exchange) {
		return exchange.subscribe(this.roundRobin);
	}

	@Benchmark
	@Threads(2)
	public @Nullable Object sclbRoundRobinTwoThreads(Exchange exchange) {
		return exchange.subscribe(this.roundRobin);
	}

	@Benchmark
	public @Nullable Object sclbRandom(Exchange exchange) {
		return exchange.subscribe(this.random);
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

	@Benchmark
	public @Nullable Object gatewayLbChooseResolvedSupplier(Exchange exchange) {
		return exchange.choose(this.gatewayLbResolved);
	}

	@Benchmark
	public Response<ServiceInstance> gatewayLbRegistry(Exchange exchange) {
		return exchange.choose(this.registry, this.instances);
	}

	/**
	 * One thread's request, as the gateway's load-balancer filter builds it. Each choose
	 * gets a fresh exchange lease in the request's attributes and closes it afterwards,
	 * as {@code InFlightReleaseFilter} does once per exchange: a lease lives for one
	 * exchange (it remembers the endpoints tried for retries), so reusing one across
	 * picks would measure a pathological exchange with millions of attempts. The lease's
	 * allocation and its release are therefore part of gateway-lb's numbers (Spring Cloud
	 * LoadBalancer's balancers get no lease: they do not use one). Also the subscriber
	 * that receives the response synchronously.
	 */
	@State(Scope.Thread)
	public static class Exchange implements CoreSubscriber<Object> {

		RequestData data;

		Request<RequestDataContext> request;

		private Map<String, Object> attributes;

		private @Nullable Object last;

		@Setup
		public void setUp() {
			this.attributes = new HashMap<>();
			HttpHeaders headers = new HttpHeaders();
			headers.add(HttpHeaders.ACCEPT, "*/*");
			this.data = new RequestData(HttpMethod.GET, URI.create("http://bench/orders"), headers,
					new LinkedMultiValueMap<>(), this.attributes);
			this.request = new DefaultRequest<>(new RequestDataContext(this.data, "default"));
		}

		@Nullable Object choose(ReactorServiceInstanceLoadBalancer balancer) {
			ExchangeLease lease = open();
			Object response = subscribe(balancer);
			lease.close();
			return response;
		}

		@Nullable Object subscribe(ReactorServiceInstanceLoadBalancer balancer) {
			this.last = null;
			balancer.choose(this.request).subscribe(this);
			return this.last;
		}

		Response<ServiceInstance> choose(BalancerRegistry registry, List<ServiceInstance> instances) {
			ExchangeLease lease = open();
			Response<ServiceInstance> response = registry.choose("bench", instances, this.data);
			lease.close();
			return response;
		}

		private ExchangeLease open() {
			ExchangeLease lease = new ExchangeLease(null);
			// replaces the previous exchange's lease: no new map entry
			this.attributes.put(ExchangeLease.ATTRIBUTE, lease);
			return lease;
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

	/**
	 * A provider of one supplier resolved up front.
	 */
	record Resolved(ServiceInstanceListSupplier supplier) implements ObjectProvider<ServiceInstanceListSupplier> {

		@Override
		public ServiceInstanceListSupplier getObject() {
			return this.supplier;
		}

		@Override
		public ServiceInstanceListSupplier getIfAvailable() {
			return this.supplier;
		}

		@Override
		public ServiceInstanceListSupplier getIfUnique() {
			return this.supplier;
		}

	}

	/**
	 * The same list on every call, as Spring Cloud LoadBalancer's caching supplier hands
	 * it out between refreshes.
	 */
	record FixedSupplier(Flux<List<ServiceInstance>> instances) implements ServiceInstanceListSupplier {

		@Override
		public String getServiceId() {
			return "bench";
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return this.instances;
		}

	}

}
