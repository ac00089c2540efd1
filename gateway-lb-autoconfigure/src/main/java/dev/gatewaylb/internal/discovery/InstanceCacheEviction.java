package dev.gatewaylb.internal.discovery;

import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.cloud.context.scope.refresh.RefreshScopeRefreshedEvent;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;

/**
 * Empties Spring Cloud LoadBalancer's instance cache when discovery reports a change, and
 * has every service's instances read again at once, so the balancers see new and removed
 * instances now instead of when the cache entry expires.
 * <p>
 * Discovery clients announce changes with a {@link HeartbeatEvent} (Consul's and
 * Kubernetes' catalog watches on each change, Eureka after each registry fetch); the
 * simple discovery client changes with the environment, under
 * {@code spring.cloud.discovery}. Listeners of {@link EnvironmentChangeEvent} run in no
 * set order, so a request may re-cache the old list before Spring Cloud has re-bound the
 * simple client's instances; a refresh therefore evicts once more on the
 * {@link RefreshScopeRefreshedEvent} that ends it.
 */
public final class InstanceCacheEviction implements ApplicationListener<ApplicationEvent> {

	private final ObjectProvider<? extends CacheManager> cacheManager;

	private final Runnable afterEviction;

	/**
	 * Creates the listener.
	 * @param cacheManager Spring Cloud LoadBalancer's cache manager, absent when its
	 * caching is off
	 * @param afterEviction what to do once the cache is empty, such as reading every
	 * service's instances again
	 */
	public InstanceCacheEviction(ObjectProvider<? extends CacheManager> cacheManager, Runnable afterEviction) {
		this.cacheManager = cacheManager;
		this.afterEviction = afterEviction;
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (event instanceof HeartbeatEvent || event instanceof RefreshScopeRefreshedEvent
				|| (event instanceof EnvironmentChangeEvent change && touchesDiscovery(change.getKeys()))) {
			evict();
		}
	}

	@Override
	public boolean supportsAsyncExecution() {
		return false;
	}

	/**
	 * Empties the instance cache.
	 */
	public void evict() {
		this.cacheManager.ifAvailable((manager) -> {
			@Nullable Cache cache = manager.getCache(CachingServiceInstanceListSupplier.SERVICE_INSTANCE_CACHE_NAME);
			if (cache != null) {
				cache.clear();
			}
		});
		this.afterEviction.run();
	}

	private static boolean touchesDiscovery(Set<String> keys) {
		return keys.stream().anyMatch((key) -> key.startsWith("spring.cloud.discovery."));
	}

}
