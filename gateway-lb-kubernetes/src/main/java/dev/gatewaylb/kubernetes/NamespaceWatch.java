package dev.gatewaylb.kubernetes;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The EndpointSlices of one namespace, watched through one fabric8 informer (a list, then
 * a watch that the informer brings back with backoff and a relist when the API server
 * goes away), kept by Service: each change tells who asked which Service changed, at
 * once.
 * <p>
 * The informer calls its handler on one thread, in order; the slices of a Service are an
 * immutable map replaced whole, so a reader on another thread (the control thread,
 * through {@link #slices}) sees one listing or the next, never half of one.
 */
final class NamespaceWatch implements ResourceEventHandler<EndpointSlice>, AutoCloseable {

	private static final Log logger = LogFactory.getLog(NamespaceWatch.class);

	/**
	 * How often the informer replays its whole store to the handler: a slice whose change
	 * was missed is applied within one. The health indicator counts a watch down for more
	 * than three of these as a problem.
	 */
	static final Duration RESYNC = Duration.ofSeconds(30);

	private final String namespace;

	private final BiConsumer<String, String> changed;

	private final LongSupplier wallMillis;

	private final LongSupplier nanoTime;

	private final Map<String, ServiceSlices> services = new ConcurrentHashMap<>();

	/**
	 * The slices without the Service label seen, by name: counted once each.
	 */
	private final Set<String> unlabelled = ConcurrentHashMap.newKeySet();

	private final CompletableFuture<Void> synced = new CompletableFuture<>();

	private volatile @Nullable SharedIndexInformer<EndpointSlice> informer;

	/**
	 * When the view last heard from the API server, wall clock; 0 before.
	 */
	private volatile long lastSyncMillis;

	/**
	 * When the watch was first seen down, by {@link #nanoTime}; 0 while it is up.
	 */
	private volatile long downSinceNanos;

	private final Runnable unlabelledSlice;

	/**
	 * Creates the watch; nothing is read before {@link #start}.
	 * @param namespace the namespace
	 * @param changed told (namespace, Service name) after each change of a Service's
	 * slices, on the informer's thread
	 * @param unlabelledSlice told of each slice without the Service label, once per slice
	 * @param wallMillis the wall clock, for the last sync time
	 * @param nanoTime the clock that times a watch that is down
	 */
	NamespaceWatch(String namespace, BiConsumer<String, String> changed, Runnable unlabelledSlice,
			LongSupplier wallMillis, LongSupplier nanoTime) {
		this.namespace = namespace;
		this.changed = changed;
		this.unlabelledSlice = unlabelledSlice;
		this.wallMillis = wallMillis;
		this.nanoTime = nanoTime;
	}

	/**
	 * Starts the informer: it lists the namespace's slices, then watches them.
	 * @param client the client
	 */
	void start(KubernetesClient client) {
		SharedIndexInformer<EndpointSlice> started = client.discovery()
			.v1()
			.endpointSlices()
			.inNamespace(this.namespace)
			.runnableInformer(RESYNC.toMillis());
		started.addEventHandler(this);
		// Keep trying whatever the error (the API server restarting, a network that
		// comes back): the last membership serves meanwhile, and the health indicator
		// says how long the watch has been down.
		started.exceptionHandler((isStarted, error) -> {
			logger.warn("The EndpointSlice watch of namespace " + this.namespace + " failed; retrying with backoff",
					error);
			return true;
		});
		this.informer = started;
		started.start().whenComplete((ignored, error) -> {
			if (error == null) {
				this.lastSyncMillis = this.wallMillis.getAsLong();
				this.synced.complete(null);
			}
		});
	}

	String namespace() {
		return this.namespace;
	}

	/**
	 * Completes when the first listing of the namespace's slices is applied.
	 */
	CompletableFuture<Void> synced() {
		return this.synced;
	}

	/**
	 * Returns a Service's slices as last heard, {@link ServiceSlices#NONE} when it has
	 * none.
	 * @param service the Service's name
	 */
	ServiceSlices slices(String service) {
		return this.services.getOrDefault(service, ServiceSlices.NONE);
	}

	/**
	 * Returns the names of the Services that have slices.
	 */
	Set<String> services() {
		return Set.copyOf(this.services.keySet());
	}

	/**
	 * Returns whether the view follows the API server now: listed once, and watching.
	 */
	boolean inSync() {
		SharedIndexInformer<EndpointSlice> informer = this.informer;
		boolean watching = informer != null && informer.isWatching();
		long now = this.nanoTime.getAsLong();
		if (watching) {
			this.downSinceNanos = 0;
		}
		else if (this.downSinceNanos == 0) {
			// 0 means up: a clock that reads 0 now counts from 1.
			this.downSinceNanos = (now == 0) ? 1 : now;
		}
		return this.synced.isDone() && watching;
	}

	/**
	 * Returns how long the watch has been seen down, {@link Duration#ZERO} while up.
	 * Meaningful after {@link #inSync()}.
	 */
	Duration downFor() {
		long since = this.downSinceNanos;
		return (since == 0) ? Duration.ZERO : Duration.ofNanos(this.nanoTime.getAsLong() - since);
	}

	/**
	 * Returns when the view last heard from the API server, or {@code null} before the
	 * first listing.
	 */
	@Nullable Instant lastSync() {
		long millis = this.lastSyncMillis;
		return (millis == 0) ? null : Instant.ofEpochMilli(millis);
	}

	@Override
	public void onAdd(EndpointSlice slice) {
		put(slice);
	}

	@Override
	public void onUpdate(EndpointSlice previous, EndpointSlice slice) {
		String before = service(previous);
		if (before != null && !before.equals(service(slice))) {
			remove(before, previous);
		}
		put(slice);
	}

	@Override
	public void onDelete(EndpointSlice slice, boolean finalStateUnknown) {
		String service = service(slice);
		if (service != null) {
			remove(service, slice);
		}
		this.unlabelled.remove(name(slice));
	}

	private void put(EndpointSlice slice) {
		this.lastSyncMillis = this.wallMillis.getAsLong();
		String service = service(slice);
		if (service == null) {
			if (this.unlabelled.add(name(slice))) {
				this.unlabelledSlice.run();
			}
			return;
		}
		ServiceSlices before = slices(service);
		EndpointSlice known = before.slices().get(name(slice));
		if (known != null && known.getMetadata() != null && slice.getMetadata() != null
				&& known.getMetadata().getResourceVersion() != null
				&& known.getMetadata().getResourceVersion().equals(slice.getMetadata().getResourceVersion())) {
			// A resync's replay of what is already applied: nothing changed.
			return;
		}
		Map<String, EndpointSlice> next = new HashMap<>(before.slices());
		next.put(name(slice), slice);
		this.services.put(service, new ServiceSlices(Map.copyOf(next)));
		this.changed.accept(this.namespace, service);
	}

	private void remove(String service, EndpointSlice slice) {
		this.lastSyncMillis = this.wallMillis.getAsLong();
		ServiceSlices before = slices(service);
		if (!before.slices().containsKey(name(slice))) {
			return;
		}
		Map<String, EndpointSlice> next = new HashMap<>(before.slices());
		next.remove(name(slice));
		if (next.isEmpty()) {
			this.services.remove(service);
		}
		else {
			this.services.put(service, new ServiceSlices(Map.copyOf(next)));
		}
		this.changed.accept(this.namespace, service);
	}

	private static @Nullable String service(EndpointSlice slice) {
		Map<String, String> labels = (slice.getMetadata() != null) ? slice.getMetadata().getLabels() : null;
		String service = (labels != null) ? labels.get(SliceInstances.SERVICE_LABEL) : null;
		return (service == null || service.isBlank()) ? null : service;
	}

	private static String name(EndpointSlice slice) {
		return (slice.getMetadata() != null) ? String.valueOf(slice.getMetadata().getName()) : "";
	}

	@Override
	public void close() {
		SharedIndexInformer<EndpointSlice> informer = this.informer;
		if (informer != null) {
			informer.close();
		}
	}

	/**
	 * One Service's slices by name: replaced whole at each change, so that a reader
	 * holding one can tell whether anything changed since by identity.
	 *
	 * @param slices the slices, by name
	 */
	record ServiceSlices(Map<String, EndpointSlice> slices) {

		static final ServiceSlices NONE = new ServiceSlices(Map.of());

		Collection<EndpointSlice> all() {
			return this.slices.values();
		}

	}

}
