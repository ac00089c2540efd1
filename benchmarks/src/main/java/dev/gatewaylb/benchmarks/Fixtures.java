package dev.gatewaylb.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

import dev.gatewaylb.internal.autoconfigure.Features;
import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Balancer;
import dev.gatewaylb.internal.balance.BalancerSettings;
import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.control.ScheduledControlThread;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.upstream.Upstreams;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Inputs shared by the benchmarks, the same on every run: seeded, never random.
 */
public final class Fixtures {

	/**
	 * How many distinct keys a benchmark cycles through: enough that the branch predictor
	 * cannot learn one key's path, few enough to stay in the L1 cache.
	 */
	public static final int KEYS = 1024;

	/**
	 * The service id of every Spring-level and request-path benchmark.
	 */
	public static final String SERVICE = "bench";

	private Fixtures() {
	}

	/**
	 * Returns {@code count} endpoints {@code 10.x.y.z:8080}.
	 * @param count the number of endpoints
	 * @param mixedWeights whether weights cycle 1 to 5 (a weighted set) rather than all 1
	 * @return the endpoints
	 */
	public static List<Endpoint> endpoints(int count, boolean mixedWeights) {
		List<Endpoint> endpoints = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			endpoints.add(Endpoint.of(host(i), 8080, mixedWeights ? 1 + i % 5 : 1));
		}
		return endpoints;
	}

	/**
	 * Returns a balancer built as production builds it ({@code System::nanoTime},
	 * {@code ThreadLocalRandom::current}), holding {@code endpoints}.
	 * @param algorithm the algorithm
	 * @param endpoints the endpoints
	 * @return the balancer
	 */
	public static Balancer<Endpoint> balancer(Algorithm algorithm, List<Endpoint> endpoints) {
		Balancer<Endpoint> balancer = new Balancer<>(BalancerSettings.DEFAULTS.withAlgorithm(algorithm),
				Function.identity(), System::nanoTime, ThreadLocalRandom::current);
		balancer.update(endpoints);
		return balancer;
	}

	/**
	 * Returns {@code count} instances of service {@code bench}, weight 1 (no metadata),
	 * at the addresses of {@link #endpoints}.
	 * @param count the number of instances
	 * @return the instances
	 */
	public static List<ServiceInstance> instances(int count) {
		List<ServiceInstance> instances = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			instances.add(new DefaultServiceInstance(SERVICE + "-" + i, SERVICE, host(i), 8080, false));
		}
		return List.copyOf(instances);
	}

	/**
	 * Returns the supplier provider Spring Cloud LoadBalancer's balancers take, as a
	 * service's child context gives it: a real bean factory, frozen (a refreshed context
	 * is, which turns on its by-type name cache), holding one supplier that returns the
	 * same list on every call, as the caching supplier does between refreshes.
	 * @param instances the instances the supplier returns
	 * @return the provider
	 */
	public static ObjectProvider<ServiceInstanceListSupplier> suppliers(List<ServiceInstance> instances) {
		DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
		beans.registerSingleton("supplier", new FixedSupplier(Flux.just(instances)));
		beans.freezeConfiguration();
		return beans.getBeanProvider(ServiceInstanceListSupplier.class);
	}

	/**
	 * Returns gateway-lb's runtimes as production builds them (the control thread on
	 * {@code System::nanoTime}, {@code ThreadLocalRandom::current}, the jobs started),
	 * without Spring: service {@code bench} has the {@link #instances} given, and
	 * {@code bench}'s runtime is built and ready when this returns. Each service's client
	 * is a plain {@code HttpClient.create} on its own pools rather than the gateway's
	 * configured one: nothing here connects. Stop the runtimes when done.
	 * <p>
	 * The control thread polls the instances once a second; the list does not change, so
	 * a poll rebuilds nothing. Stopping the runtimes leaves the control thread idle, a
	 * daemon.
	 * @param algorithm the algorithm of every service
	 * @param instances the instances of {@code bench}
	 * @param properties more {@code gateway.lb} properties, such as
	 * {@code gateway.lb.defaults.retry.attempts}
	 * @return the started runtimes
	 */
	public static ServiceRuntimes runtimes(Algorithm algorithm, List<ServiceInstance> instances,
			Map<String, Object> properties) {
		Map<String, Object> all = new HashMap<>(properties);
		all.put("gateway.lb.defaults.algorithm", algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-'));
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("bench", all));
		LiveSettings settings = new LiveSettings(GatewayLbSettings.bind(environment));
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
		ScheduledControlThread control = new ScheduledControlThread();
		ServiceRuntimes runtimes = new ServiceRuntimes(settings, source,
				new Upstreams((provider) -> HttpClient.create(provider), Upstreams.Tls.JDK, control), control,
				ThreadLocalRandom::current, Features.all());
		runtimes.start();
		runtimes.whenReady(SERVICE).block(Duration.ofSeconds(10));
		return runtimes;
	}

	/**
	 * Returns {@link #KEYS} client addresses such as {@code 203.0.113.7}, the
	 * consistent-hash key of {@code hash-key: client-ip}.
	 * @return the keys
	 */
	public static String[] clientAddresses() {
		SplittableRandom random = new SplittableRandom(7);
		String[] keys = new String[KEYS];
		for (int i = 0; i < KEYS; i++) {
			keys[i] = random.nextInt(1, 224) + "." + random.nextInt(256) + "." + random.nextInt(256) + "."
					+ random.nextInt(1, 255);
		}
		return keys;
	}

	private static String host(int i) {
		return "10." + (i >> 16 & 0xff) + "." + (i >> 8 & 0xff) + "." + (i & 0xff);
	}

	/**
	 * The same list on every call, as Spring Cloud LoadBalancer's caching supplier hands
	 * it out between refreshes.
	 */
	private record FixedSupplier(Flux<List<ServiceInstance>> instances) implements ServiceInstanceListSupplier {

		@Override
		public String getServiceId() {
			return SERVICE;
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return this.instances;
		}

	}

}
