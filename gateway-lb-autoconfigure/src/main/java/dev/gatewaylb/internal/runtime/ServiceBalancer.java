package dev.gatewaylb.internal.runtime;

import dev.gatewaylb.internal.balance.Algorithm;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.request.Cookies;
import dev.gatewaylb.internal.request.HashKey;
import dev.gatewaylb.internal.discovery.Member;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.http.HttpHeaders;

/**
 * Spring Cloud LoadBalancer's view of one service's gateway-lb runtime: the bean a
 * {@code @LoadBalanced} {@code WebClient} or any other Spring Cloud LoadBalancer client
 * gets for the service. Gateway routes do not come here: the attempt filter picks for
 * them before Spring Cloud Gateway's load-balancer filter, which then passes them by.
 * <p>
 * Nothing tells this balancer when such a request ends, so it picks without counting the
 * request in flight, and the load-aware algorithms pick uniformly instead of herding
 * every request onto an endpoint that looks idle. Consistent hashing reads a header or
 * cookie key from the request; without one (or for {@code client-ip}, which these
 * requests do not carry) it falls back to round-robin. With a
 * {@code hash-balance-factor}, the bound is computed from the gateway's own requests in
 * flight: these requests are not counted, so they never move a key by themselves.
 */
public final class ServiceBalancer implements ReactorServiceInstanceLoadBalancer {

	private final String serviceId;

	private final ServiceRuntimes runtimes;

	/**
	 * Creates the balancer of one service.
	 * @param serviceId the service id
	 * @param runtimes every service's runtime
	 */
	public ServiceBalancer(String serviceId, ServiceRuntimes runtimes) {
		this.serviceId = serviceId;
		this.runtimes = runtimes;
	}

	@Override
	@SuppressWarnings("rawtypes")
	public Mono<Response<ServiceInstance>> choose(Request request) {
		ServiceRuntime runtime = this.runtimes.find(this.serviceId);
		if (runtime != null) {
			return Mono.just(pick(runtime, request));
		}
		return this.runtimes.whenReady(this.serviceId)
			.map((ready) -> pick(ready, request))
			.defaultIfEmpty(new EmptyResponse());
	}

	@SuppressWarnings("rawtypes")
	private static Response<ServiceInstance> pick(ServiceRuntime runtime, Request request) {
		Snapshot<Member> snapshot = runtime.snapshot();
		CharSequence key = (snapshot.settings().algorithm() == Algorithm.CONSISTENT_HASH)
				? hashKey(runtime.settings().hashKey(), request) : null;
		int index = snapshot.isLoadAware() ? snapshot.selectUniformly() : snapshot.select(key);
		runtime.noteFailOpen(snapshot);
		if (index < 0) {
			return new EmptyResponse();
		}
		snapshot.acquire(index).release();
		return snapshot.value(index).response();
	}

	@SuppressWarnings("rawtypes")
	private static @Nullable String hashKey(HashKey hashKey, Request request) {
		RequestData data = (request.getContext() instanceof RequestDataContext context) ? context.getClientRequest()
				: null;
		HttpHeaders headers = (data != null) ? data.getHeaders() : null;
		if (headers == null) {
			return null;
		}
		String key = switch (hashKey.source()) {
			case CLIENT_IP -> null;
			case HEADER -> headers.getFirst(hashKey.name());
			case COOKIE -> Cookies.first(headers.get(HttpHeaders.COOKIE), hashKey.name());
		};
		return (key == null || key.isEmpty()) ? null : key;
	}

}
