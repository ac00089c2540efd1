package dev.gatewaylb.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

import dev.gatewaylb.balance.Algorithm;
import dev.gatewaylb.balance.Balancer;
import dev.gatewaylb.balance.BalancerSettings;
import dev.gatewaylb.balance.Endpoint;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

/**
 * Inputs shared by the benchmarks, the same on every run: seeded, never random.
 */
public final class Fixtures {

	/**
	 * How many distinct keys a benchmark cycles through: enough that the branch predictor
	 * cannot learn one key's path, few enough to stay in the L1 cache.
	 */
	public static final int KEYS = 1024;

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
			instances.add(new DefaultServiceInstance("bench-" + i, "bench", host(i), 8080, false));
		}
		return List.copyOf(instances);
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

}
