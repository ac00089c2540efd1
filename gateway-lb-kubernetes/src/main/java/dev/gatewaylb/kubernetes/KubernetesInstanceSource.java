package dev.gatewaylb.kubernetes;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import dev.gatewaylb.gateway.discovery.InstanceSource;
import dev.gatewaylb.gateway.discovery.SourceStatus;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Every service's instances from the EndpointSlices of its Kubernetes Service, watched
 * (one informer per namespace), in place of Spring Cloud discovery: a change reaches the
 * balancer as the API server sends it, without waiting for a poll.
 * <p>
 * A service's instances are worked out again only when its slices changed (the watch
 * replaces a Service's slices whole, and the last result is kept with the slices it came
 * from); the poll that reads them once a second then costs a map lookup. Until the first
 * listing of its namespace a service waits at most {@code initial-sync-timeout}, then
 * serves what there is. When the API server goes away the last slices stay.
 * <p>
 * Whether gateway-lb balances a service at all is still the application's LoadBalancer
 * configuration's to say: {@link #balancesHere} asks the source it replaces.
 */
public final class KubernetesInstanceSource implements InstanceSource, AutoCloseable {

	private static final Log logger = LogFactory.getLog(KubernetesInstanceSource.class);

	private static final String REJECTED = "gateway.lb.discovery.rejected";

	private final KubernetesClient client;

	private final String namespace;

	private final Map<String, ServiceTarget> targets;

	private final Duration initialSyncTimeout;

	private final InstanceSource balancing;

	private final @Nullable MeterRegistry meters;

	/**
	 * Whether the client was built for this source, and is closed with it.
	 */
	private boolean ownsClient;

	private final Map<String, NamespaceWatch> watches = new LinkedHashMap<>();

	private final Map<String, Computed> computed = new ConcurrentHashMap<>();

	private final Set<String> reportedPortProblems = ConcurrentHashMap.newKeySet();

	private volatile Consumer<String> changed = (serviceId) -> {
	};

	/**
	 * When {@link #start} began, by {@link System#nanoTime()}.
	 */
	private volatile long startedNanos;

	/**
	 * Creates the source; nothing is read before {@link #start}.
	 * @param client the Kubernetes client
	 * @param namespace the namespace of the Services a service id maps to by default
	 * @param targets the services whose block names a Service, namespace or port of its
	 * own, by lower-case service id
	 * @param initialSyncTimeout the longest a service waits for its namespace's first
	 * listing
	 * @param balancing says whether gateway-lb balances a service (the source this one
	 * replaces)
	 * @param meters where {@code gateway.lb.discovery.rejected} is counted, or
	 * {@code null}
	 */
	KubernetesInstanceSource(KubernetesClient client, String namespace, Map<String, ServiceTarget> targets,
			Duration initialSyncTimeout, InstanceSource balancing, @Nullable MeterRegistry meters) {
		this.client = client;
		this.namespace = namespace;
		this.targets = Map.copyOf(targets);
		this.initialSyncTimeout = initialSyncTimeout;
		this.balancing = balancing;
		this.meters = meters;
	}

	/**
	 * Checks that the client may list and watch EndpointSlices in every namespace it
	 * needs, then starts one watch per namespace.
	 * @throws IllegalStateException naming the verb, the resource and the namespace when
	 * a permission is missing
	 */
	public void start() {
		this.startedNanos = System.nanoTime();
		Set<String> namespaces = new HashSet<>();
		namespaces.add(this.namespace);
		this.targets.values().forEach((target) -> namespaces.add(target.namespace()));
		for (String name : namespaces.stream().sorted().toList()) {
			checkAccess(name);
			NamespaceWatch watch = new NamespaceWatch(name, this::sliceChanged,
					() -> count("", SliceInstances.Rejection.NO_SERVICE_LABEL, 1), System::currentTimeMillis,
					System::nanoTime);
			this.watches.put(name, watch);
			watch.start(this.client);
		}
	}

	/**
	 * Fails start-up, naming what is missing, when the client may not list or watch
	 * EndpointSlices in a namespace. An API server that cannot be reached is no reason to
	 * fail: the watch keeps trying, and the health indicator says so.
	 */
	private void checkAccess(String namespace) {
		try {
			this.client.discovery()
				.v1()
				.endpointSlices()
				.inNamespace(namespace)
				.list(new ListOptionsBuilder().withLimit(1L).build());
		}
		catch (KubernetesClientException ex) {
			if (ex.getCode() == 403 || ex.getCode() == 401) {
				throw new IllegalStateException(forbidden("list", namespace) + ": " + ex.getMessage(), ex);
			}
			logger.warn("Could not list the EndpointSlices of namespace " + namespace
					+ " at start-up; the watch keeps trying: " + ex.getMessage());
			return;
		}
		try {
			SelfSubjectAccessReview review = this.client.authorization()
				.v1()
				.selfSubjectAccessReview()
				.create(new SelfSubjectAccessReviewBuilder().withNewSpec()
					.withNewResourceAttributes()
					.withNamespace(namespace)
					.withVerb("watch")
					.withGroup("discovery.k8s.io")
					.withResource("endpointslices")
					.endResourceAttributes()
					.endSpec()
					.build());
			if (review != null && review.getStatus() != null && Boolean.FALSE.equals(review.getStatus().getAllowed())) {
				throw new IllegalStateException(forbidden("watch", namespace));
			}
		}
		catch (KubernetesClientException ex) {
			// A cluster that does not answer access reviews: the watch itself will say.
			logger.debug("Could not review the watch permission in namespace " + namespace, ex);
		}
	}

	private static String forbidden(String verb, String namespace) {
		return "gateway.lb.kubernetes: the client may not " + verb
				+ " endpointslices (API group discovery.k8s.io) in namespace " + namespace
				+ "; grant its service account list and watch on them (a Role and RoleBinding, docs/kubernetes.md)";
	}

	/**
	 * Fails start-up when a configured service's Service has several ports, none named
	 * {@code http}, and its block names none: waits for the first listing of the
	 * namespaces for at most {@code initial-sync-timeout}, then checks each service on
	 * what is known (a service known only later, or only by a route, is reported in the
	 * log when first read, and balances nothing until the key is set).
	 * @param serviceIds the ids configured under {@code gateway.lb.services}
	 * @throws IllegalStateException naming
	 * {@code gateway.lb.services.<id>.kubernetes.port}
	 */
	void checkPorts(Set<String> serviceIds) {
		long deadline = this.startedNanos + this.initialSyncTimeout.toNanos();
		for (NamespaceWatch watch : this.watches.values()) {
			long left = deadline - System.nanoTime();
			if (left <= 0) {
				break;
			}
			try {
				watch.synced().get(left, java.util.concurrent.TimeUnit.NANOSECONDS);
			}
			catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException ex) {
				// Not listed in time: nothing to check against; the watch keeps trying.
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
		for (String serviceId : serviceIds) {
			ServiceTarget target = target(serviceId);
			NamespaceWatch watch = this.watches.get(target.namespace());
			if (watch == null) {
				continue;
			}
			String problem = SliceInstances.of(serviceId, target, watch.slices(target.service()).all()).portProblem();
			if (problem != null) {
				throw new IllegalStateException(problem);
			}
		}
	}

	@Override
	public boolean balancesHere(String serviceId) {
		return this.balancing.balancesHere(serviceId);
	}

	@Override
	public Mono<List<ServiceInstance>> instances(String serviceId) {
		ServiceTarget target = target(serviceId);
		NamespaceWatch watch = this.watches.get(target.namespace());
		if (watch == null) {
			return Mono.just(List.of());
		}
		Mono<List<ServiceInstance>> current = Mono.fromSupplier(() -> current(serviceId, target, watch));
		// Waits for the first listing only within initial-sync-timeout of the start: a
		// watch that cannot list for longer serves what it has at once.
		Duration left = this.initialSyncTimeout.minus(Duration.ofNanos(System.nanoTime() - this.startedNanos));
		if (watch.synced().isDone() || left.isNegative() || left.isZero()) {
			return current;
		}
		return Mono.fromCompletionStage(watch.synced())
			.timeout(left, Mono.empty())
			.onErrorResume((error) -> Mono.empty())
			.then(current);
	}

	@Override
	public Mono<Set<String>> services() {
		Set<String> ids = new HashSet<>(this.targets.keySet());
		NamespaceWatch watch = this.watches.get(this.namespace);
		if (watch != null) {
			ids.addAll(watch.services());
		}
		return Mono.just(ids);
	}

	@Override
	public void onChange(Consumer<String> changed) {
		this.changed = changed;
	}

	@Override
	public SourceStatus status() {
		boolean inSync = true;
		Instant lastSync = null;
		String problem = null;
		Duration allowed = NamespaceWatch.RESYNC.multipliedBy(3);
		for (NamespaceWatch watch : this.watches.values()) {
			inSync &= watch.inSync();
			Instant last = watch.lastSync();
			if (last != null && (lastSync == null || last.isAfter(lastSync))) {
				lastSync = last;
			}
			Duration down = watch.downFor();
			if (down.compareTo(allowed) > 0) {
				problem = "the EndpointSlice watch of namespace " + watch.namespace() + " has been down for "
						+ down.toSeconds() + " s (more than three resyncs of " + NamespaceWatch.RESYNC.toSeconds()
						+ " s); the last endpoints keep serving";
			}
		}
		return new SourceStatus("kubernetes", inSync, lastSync, problem);
	}

	private ServiceTarget target(String serviceId) {
		ServiceTarget target = this.targets.get(serviceId.toLowerCase(Locale.ROOT));
		return (target != null) ? target : ServiceTarget.of(serviceId, this.namespace);
	}

	/**
	 * Returns a service's instances, worked out again only when its slices changed.
	 */
	private List<ServiceInstance> current(String serviceId, ServiceTarget target, NamespaceWatch watch) {
		NamespaceWatch.ServiceSlices slices = watch.slices(target.service());
		String key = serviceId.toLowerCase(Locale.ROOT);
		Computed last = this.computed.get(key);
		if (last != null && last.slices == slices) {
			return last.instances;
		}
		SliceInstances.Result result = SliceInstances.of(serviceId, target, slices.all());
		result.rejected().forEach((reason, count) -> count(key, reason, count));
		String problem = result.portProblem();
		if (problem != null && this.reportedPortProblems.add(key + "/" + problem)) {
			logger.error(problem);
		}
		this.computed.put(key, new Computed(slices, result.instances()));
		return result.instances();
	}

	private void count(String service, SliceInstances.Rejection reason, int count) {
		MeterRegistry meters = this.meters;
		if (meters != null) {
			meters.counter(REJECTED, "service", service, "reason", reason.tag()).increment(count);
		}
	}

	/**
	 * Tells the poller which services read a Service whose slices changed.
	 */
	private void sliceChanged(String namespace, String service) {
		List<String> ids = new ArrayList<>(1);
		if (namespace.equals(this.namespace) && !this.targets.containsKey(service)) {
			ids.add(service);
		}
		this.targets.forEach((id, target) -> {
			if (target.namespace().equals(namespace) && target.service().equals(service)) {
				ids.add(id);
			}
		});
		Consumer<String> changed = this.changed;
		ids.forEach(changed);
	}

	/**
	 * Closes the client with this source: it was built for it.
	 */
	void ownClient() {
		this.ownsClient = true;
	}

	@Override
	public void close() {
		this.watches.values().forEach(NamespaceWatch::close);
		if (this.ownsClient) {
			this.client.close();
		}
	}

	/**
	 * A service's instances and the slices they were worked out from.
	 */
	private record Computed(NamespaceWatch.ServiceSlices slices, List<ServiceInstance> instances) {

	}

}
