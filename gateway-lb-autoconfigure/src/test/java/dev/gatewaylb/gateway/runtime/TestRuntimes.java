package dev.gatewaylb.gateway.runtime;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.gateway.settings.GatewayLbSettings;
import dev.gatewaylb.gateway.settings.LiveSettings;
import dev.gatewaylb.gateway.upstream.Upstreams;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Runtimes over instances the test sets, a clock it drives and a seeded random source; no
 * Spring context. Started on creation; close it.
 */
public final class TestRuntimes implements AutoCloseable {

	public final AtomicLong clock = new AtomicLong(1_000_000_000L);

	public final SplittableRandom random = new SplittableRandom(42);

	public final List<ServiceInstance> instances = new CopyOnWriteArrayList<>();

	public final ServiceRuntimes runtimes;

	public final LiveSettings settings;

	public TestRuntimes(Map<String, Object> properties) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		this.settings = new LiveSettings(GatewayLbSettings.bind(environment));
		InstanceSource source = new InstanceSource() {

			@Override
			public boolean balancesHere(String serviceId) {
				return true;
			}

			@Override
			public Mono<List<ServiceInstance>> instances(String serviceId) {
				return Mono.just(List.copyOf(TestRuntimes.this.instances));
			}

		};
		this.runtimes = new ServiceRuntimes(this.settings, source,
				new Upstreams((provider) -> HttpClient.create(provider)), this.clock::get, () -> this.random);
		this.runtimes.start();
	}

	/**
	 * Returns the runtime of a service once its first instance list is applied.
	 */
	public ServiceRuntime runtime(String serviceId) {
		return this.runtimes.whenReady(serviceId).block(Duration.ofSeconds(10));
	}

	/**
	 * Puts the settings of {@code properties} in force, as a refresh would, and waits
	 * until the runtimes applied them.
	 */
	public void refresh(Map<String, Object> properties) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		this.settings.apply(GatewayLbSettings.bind(environment));
		this.runtimes.sync();
	}

	/**
	 * Reads every service's instances again and waits until the result is applied.
	 */
	public void poll() {
		this.runtimes.pollNow();
		this.runtimes.sync();
	}

	/**
	 * Returns an instance of service {@code svc} on 10.0.0.n:n, n = letter index + 1.
	 */
	public static ServiceInstance instance(String id, int weight) {
		int n = id.charAt(0) - 'a' + 1;
		return new DefaultServiceInstance(id, "svc", "10.0.0." + n, n, false, Map.of("weight", "" + weight));
	}

	@Override
	public void close() {
		this.runtimes.stop();
	}

}
