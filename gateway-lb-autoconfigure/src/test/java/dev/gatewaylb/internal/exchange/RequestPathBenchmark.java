package dev.gatewaylb.internal.exchange;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.affinity.AffinitySession;
import dev.gatewaylb.internal.overload.Admission;
import dev.gatewaylb.internal.autoconfigure.Features;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.InFlightGuard;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ScheduledControlThread;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.gateway.upstream.UpstreamObserver;
import dev.gatewaylb.internal.upstream.Upstreams;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.split.StickyCookie;
import dev.gatewaylb.gateway.filter.AttemptFilter;
import dev.gatewaylb.gateway.filter.InFlightReleaseFilter;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import dev.gatewaylb.internal.observation.AttemptObservations;
import io.micrometer.observation.ObservationRegistry;
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
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.util.LinkedMultiValueMap;

/**
 * What one exchange of one attempt pays gateway-lb on the request path, as its owner and
 * the service's client go through it: the exchange's lease opened (as
 * {@link InFlightReleaseFilter} does), its owner made ({@link ProxiedExchange}, as
 * {@link AttemptFilter} does), the service's runtime looked up
 * ({@link ServiceRuntimes#find}, one map read), the pick (select on the runtime's
 * snapshot, the fail-open check, a new {@link Attempt} claiming the endpoint, held by the
 * lease), then the upstream client's callbacks: {@code requestPrepared} (the header
 * deadline; with retries on, the clock read for the retry deadline and the request
 * counted in the retry budget), {@code requestSent}, {@code responseReceived(200)} and
 * {@code responseCompleted}, which settles the outcome, credits the endpoint and ends the
 * claim; and last the lease closed.
 * <p>
 * {@code requestPathTwoThreads} runs it on two threads over one service, whose
 * round-robin position, endpoint counters and retry budget they share;
 * {@code requestPathWithoutRetries} with {@code retry.attempts: 0}, whose first attempt
 * reads no clock and counts nothing in the budget. Endpoints carry 0 to 3 requests in
 * flight (seeded), so least-requests compares real counts. {@code sclbRoundRobin} and
 * {@code sclbRoundRobinTwoThreads} are the peer in the same run: Spring Cloud
 * LoadBalancer's {@code RoundRobinLoadBalancer.choose()}, what the same request pays for
 * balancing without gateway-lb.
 * <p>
 * Not measured: the exchange's attributes, the endpoint's URL, the Reactor operators of
 * the chain, the routing filter and Reactor Netty; the load run
 * ({@code benchmarks/load/run.sh}) measures the whole gateway. In this module's test
 * tree, beside the package-private classes it measures, so that no package is split
 * between modules; {@code benchmarks/request-path.sh} runs it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
public class RequestPathBenchmark {

	static final String SERVICE = "bench";

	/**
	 * The connection's event loop the client hands the observer: only a service that
	 * hedges schedules on it, so this one never runs a task or starts its thread.
	 */
	private static final EventLoop EVENT_LOOP = new DefaultEventLoop();

	/**
	 * Attempts observed in a registry whose one handler does nothing.
	 */
	private static final AttemptObservations OBSERVED = observed();

	private static AttemptObservations observed() {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler((context) -> true);
		return java.util.Objects.requireNonNull(AttemptObservations.of(registry));
	}

	@Benchmark
	public Object requestPath(Service service) {
		return request(service);
	}

	@Benchmark
	@Threads(2)
	public Object requestPathTwoThreads(Service service) {
		return request(service);
	}

	@Benchmark
	public Object requestPathWithoutRetries(WithoutRetries service) {
		return request(service);
	}

	/**
	 * The request path when the application has an observation registry: each attempt a
	 * {@code gateway.lb.attempt} observation, started and stopped, its context made;
	 * handed to one handler that does nothing, so that what is measured is gateway-lb's
	 * part, not a tracer's or a timer's.
	 */
	@Benchmark
	public Object requestPathObserved(Service service) {
		return request(service, OBSERVED);
	}

	@Benchmark
	public @Nullable Object sclbRoundRobin(Peer peer) {
		return peer.choose();
	}

	@Benchmark
	@Threads(2)
	public @Nullable Object sclbRoundRobinTwoThreads(Peer peer) {
		return peer.choose();
	}

	/**
	 * One exchange of one attempt, from the lease's opening to its closing. Returns the
	 * attempt, so that it, its owner and its lease escape as they do in the gateway (the
	 * exchange keeps them) and the JIT cannot take their allocations away.
	 */
	private static Object request(Service service) {
		return request(service, null);
	}

	private static Object request(Service service, @Nullable AttemptObservations observations) {
		ExchangeLease lease = new ExchangeLease();
		Picks picks = new Picks(lease, service.exchange, service.url, null, List.of(), observations);
		ServiceRuntime runtime = service.runtimes.find(SERVICE);
		if (runtime == null) {
			throw new IllegalStateException("service " + SERVICE + " has no runtime");
		}
		Attempt attempt = picks.pick(runtime, AffinitySession.NONE, Admission.NONE, 0, null);
		if (attempt == null) {
			throw new IllegalStateException("no endpoint to pick");
		}
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

		ScheduledControlThread control;

		ProxyServices services;

		final MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.get("http://gateway/bench/orders"));

		final URI url = URI.create("lb://" + SERVICE + "/orders");

		final GatewayFilterChain chain = (exchange) -> Mono.empty();

		private final List<InFlightGuard> load = new ArrayList<>();

		@Setup
		public void setUp() {
			Map<String, Object> properties = new HashMap<>(properties());
			properties.put("gateway.lb.defaults.algorithm",
					this.algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-'));
			StandardEnvironment environment = new StandardEnvironment();
			environment.getPropertySources().addFirst(new MapPropertySource("bench", properties));
			LiveSettings settings = new LiveSettings(GatewayLbSettings.bind(environment));
			List<ServiceInstance> instances = instances(this.endpoints);
			InstanceSource source = new InstanceSource() {

				@Override
				public boolean balancesHere(String serviceId) {
					return true;
				}

				@Override
				public Mono<List<ServiceInstance>> instances(String serviceId) {
					return Mono.just(SERVICE.equals(serviceId) ? instances : List.of());
				}

				@Override
				public Mono<Set<String>> services() {
					return Mono.just(Set.of(SERVICE));
				}

			};
			// As production builds them: the control thread on System::nanoTime, a
			// thread-local random; nothing here connects.
			this.control = new ScheduledControlThread();
			this.runtimes = new ServiceRuntimes(settings, source,
					new Upstreams((provider) -> HttpClient.create(provider), Upstreams.Tls.JDK, this.control),
					this.control, ThreadLocalRandom::current, Features.all());
			this.runtimes.start();
			this.runtimes.whenReady(SERVICE).block(Duration.ofSeconds(10));
			SplitRollouts rollouts = new SplitRollouts(this.control, System::currentTimeMillis,
					() -> FleetDecisions.NONE);
			this.services = new ProxyServices(settings, this.runtimes,
					new SplitRouting(new StickyCookie(System::currentTimeMillis, 42), new SplitCounters(), rollouts),
					false, new Shadows(List::of));
			Snapshot<Member> snapshot = this.runtimes.find(SERVICE).snapshot();
			if (snapshot.size() != this.endpoints) {
				throw new IllegalStateException("service " + SERVICE + " is not ready");
			}
			SplittableRandom random = new SplittableRandom(42);
			for (int i = 0; i < snapshot.size(); i++) {
				InFlightGuard sample = snapshot.acquire(i);
				sample.recordLatency(System.nanoTime() + random.nextLong(1_000_000, 50_000_000));
				sample.release();
				for (int j = random.nextInt(4); j > 0; j--) {
					this.load.add(snapshot.acquire(i));
				}
			}
		}

		Map<String, Object> properties() {
			return Map.of();
		}

		@TearDown
		public void tearDown() {
			this.load.forEach(InFlightGuard::release);
			this.runtimes.stop();
			this.control.stop();
		}

	}

	/**
	 * Spring Cloud LoadBalancer's {@link RoundRobinLoadBalancer#choose} over the same
	 * instances, as Spring Cloud Gateway's load-balancer filter asks it (a gateway-shaped
	 * request, the supplier a bean factory gives, the caching supplier's fixed list),
	 * subscribed on the benchmark's thread by a reusable subscriber: what the same
	 * request pays for balancing without gateway-lb.
	 */
	@State(Scope.Thread)
	public static class Peer implements CoreSubscriber<Object> {

		@Param({ "3", "1000" })
		public int endpoints;

		private RoundRobinLoadBalancer roundRobin;

		private Request<RequestDataContext> request;

		private @Nullable Object last;

		@Setup
		public void setUp() {
			List<ServiceInstance> instances = instances(this.endpoints);
			DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
			Flux<List<ServiceInstance>> fixed = Flux.just(instances);
			beans.registerSingleton("supplier", new ServiceInstanceListSupplier() {

				@Override
				public String getServiceId() {
					return SERVICE;
				}

				@Override
				public Flux<List<ServiceInstance>> get() {
					return fixed;
				}

			});
			beans.freezeConfiguration();
			this.roundRobin = new RoundRobinLoadBalancer(beans.getBeanProvider(ServiceInstanceListSupplier.class),
					SERVICE);
			HttpHeaders headers = new HttpHeaders();
			headers.add(HttpHeaders.ACCEPT, "*/*");
			RequestData data = new RequestData(HttpMethod.GET, URI.create("http://bench/orders"), headers,
					new LinkedMultiValueMap<>(), new HashMap<>());
			this.request = new DefaultRequest<>(new RequestDataContext(data, "default"));
		}

		@Nullable Object choose() {
			this.last = null;
			this.roundRobin.choose(this.request).subscribe(this);
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

	static List<ServiceInstance> instances(int count) {
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String host = "10." + (i >> 16 & 0xff) + "." + (i >> 8 & 0xff) + "." + (i & 0xff);
			instances.add(new DefaultServiceInstance(SERVICE + "-" + i, SERVICE, host, 8080, false));
		}
		return instances;
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

}
