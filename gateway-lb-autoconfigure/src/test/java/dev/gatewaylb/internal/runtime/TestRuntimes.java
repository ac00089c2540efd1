package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.autoconfigure.Features;
import dev.gatewaylb.internal.control.ManualControlThread;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.upstream.Upstreams;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Runtimes over instances the test sets, on a control thread and a clock it drives and a
 * seeded random source; no Spring context. Started on creation; close it.
 * <p>
 * Nothing runs in the background: {@link #runtime}, {@link #refresh}, {@link #poll} and
 * {@link #advance} run what is due on the test's thread ({@link #control}), so a test
 * sees their effect when they return. Instances are read from {@link #instances} when a
 * poll runs; {@link #source} replaces that source, to fail or to answer later.
 */
public final class TestRuntimes implements AutoCloseable {

	public final AtomicLong clock = new AtomicLong(1_000_000_000L);

	public final ManualControlThread control = new ManualControlThread(this.clock);

	public final SplittableRandom random = new SplittableRandom(42);

	public final List<ServiceInstance> instances = new CopyOnWriteArrayList<>();

	public final ServiceRuntimes runtimes;

	public final LiveSettings settings;

	/**
	 * What a poll answers; by default {@link #instances}.
	 */
	public volatile InstanceSource source;

	/**
	 * The services the default source lists as discovery's.
	 */
	public final Set<String> listed = ConcurrentHashMap.newKeySet();

	public TestRuntimes(Map<String, Object> properties) {
		this.settings = new LiveSettings(bind(properties));
		this.source = new InstanceSource() {

			@Override
			public boolean balancesHere(String serviceId) {
				return true;
			}

			@Override
			public Mono<List<ServiceInstance>> instances(String serviceId) {
				return Mono.just(List.copyOf(TestRuntimes.this.instances));
			}

			@Override
			public Mono<Set<String>> services() {
				return Mono.just(Set.copyOf(TestRuntimes.this.listed));
			}

		};
		InstanceSource delegating = new InstanceSource() {

			@Override
			public boolean balancesHere(String serviceId) {
				return TestRuntimes.this.source.balancesHere(serviceId);
			}

			@Override
			public Mono<List<ServiceInstance>> instances(String serviceId) {
				return TestRuntimes.this.source.instances(serviceId);
			}

			@Override
			public Mono<Set<String>> services() {
				return TestRuntimes.this.source.services();
			}

		};
		this.runtimes = new ServiceRuntimes(this.settings, delegating,
				new Upstreams((provider) -> HttpClient.create(provider), Upstreams.Tls.JDK, this.control), this.control,
				() -> this.random, Features.all());
		this.runtimes.start();
		this.control.runDue();
	}

	/**
	 * Returns the runtime of a service once its first instance list is applied, tracking
	 * it if it was not (and listing it as discovery's from then on).
	 * @throws IllegalStateException when the service is not ready after what was due ran
	 */
	public ServiceRuntime runtime(String serviceId) {
		this.listed.add(serviceId);
		this.runtimes.track(serviceId);
		CompletableFuture<ServiceRuntime> ready = this.runtimes.whenReady(serviceId).toFuture();
		this.control.runDue();
		ServiceRuntime runtime = ready.getNow(null);
		if (runtime == null) {
			throw new IllegalStateException("service " + serviceId + " is not ready");
		}
		return runtime;
	}

	/**
	 * Puts the settings of {@code properties} in force, as a refresh would, and runs what
	 * the runtimes do about them.
	 */
	public void refresh(Map<String, Object> properties) {
		this.settings.apply(bind(properties));
		this.control.runDue();
	}

	/**
	 * Reads every service's instances again and applies the result.
	 */
	public void poll() {
		this.runtimes.pollNow();
		this.control.runDue();
	}

	/**
	 * Moves the clock on and runs the jobs and tasks then due.
	 */
	public void advance(Duration by) {
		this.control.advance(by);
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
		this.control.stop();
		this.runtimes.stop();
	}

	private static GatewayLbSettings bind(Map<String, Object> properties) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		return GatewayLbSettings.bind(environment);
	}

}
