package dev.gatewaylb.internal.discovery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.gatewaylb.internal.balance.Endpoint;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.control.Separately;
import dev.gatewaylb.internal.settings.InstanceWeights;
import dev.gatewaylb.internal.request.Logged;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Reads every watched service's instances each {@link #POLL_INTERVAL} on the control
 * thread (the {@code discovery-poll} job), and at once when asked ({@link #pollAll()}, on
 * a discovery announcement), and tells each service's listener when its membership
 * changed: an address joined or left, a weight or a scheme changed
 * ({@link Membership#differsFrom}), never for a reshuffled list.
 * <p>
 * An instance's weight is its metadata {@code weight}; an invalid one is balanced with
 * weight 1 and logged once per instance and value. A failing read keeps the last
 * membership, logged once per distinct error. An empty list after a non-empty one is
 * believed only when a poll at least one interval later says so again
 * ({@link #emptyConfirmed}). A service is ready after its first answer, its first
 * failure, or {@link #FIRST_POLL_TIMEOUT}, whichever comes first.
 * <p>
 * Every method but {@link #pollNow()} runs on the control thread, and so does every
 * callback; the per-service state is confined to it.
 */
public final class DiscoveryPoller {

	/**
	 * How often every watched service's instances are read again.
	 */
	public static final Duration POLL_INTERVAL = Duration.ofSeconds(1);

	/**
	 * Longest wait for a service's first instance list before it is ready with none (and
	 * its first requests get 503).
	 */
	public static final Duration FIRST_POLL_TIMEOUT = Duration.ofSeconds(10);

	private static final Log logger = LogFactory.getLog(DiscoveryPoller.class);

	private static final int MAX_REPORTED = 10_000;

	private final InstanceSource source;

	private final ControlThread control;

	private final Separately separately = new Separately("discovery-poll");

	private final List<Watch> watches = new ArrayList<>();

	private final Set<String> reported = ConcurrentHashMap.newKeySet();

	private ControlThread.@Nullable Job polling;

	/**
	 * Creates the poller; nothing is polled every interval until {@link #start()}.
	 * @param source where instances come from
	 * @param control the control thread, whose clock confirms empty lists
	 */
	public DiscoveryPoller(InstanceSource source, ControlThread control) {
		this.source = Objects.requireNonNull(source, "source");
		this.control = Objects.requireNonNull(control, "control");
	}

	/**
	 * Starts the {@code discovery-poll} job; idempotent. Control thread, or before any
	 * task runs.
	 */
	public synchronized void start() {
		if (this.polling == null) {
			this.source.onChange((serviceId) -> this.control.execute(() -> pollChanged(serviceId)));
			this.polling = this.control.every("discovery-poll", POLL_INTERVAL, this::pollAll);
		}
	}

	/**
	 * Reads a service the source says changed, at once. Control thread.
	 */
	private void pollChanged(String serviceId) {
		for (Watch watch : this.watches) {
			if (watch.serviceId.equalsIgnoreCase(serviceId)) {
				poll(watch);
			}
		}
	}

	/**
	 * Starts watching a service and reads its instances at once. Control thread.
	 * @param serviceId the service id
	 * @param listener told of the service's changes, on the control thread
	 * @return the watch
	 */
	public Watch watch(String serviceId, Listener listener) {
		Watch watch = new Watch(serviceId, listener);
		this.watches.add(watch);
		this.control.after(FIRST_POLL_TIMEOUT, listener::ready);
		poll(watch);
		return watch;
	}

	/**
	 * Stops watching a service: it is polled no more, and an answer under way is dropped.
	 * Control thread.
	 * @param watch the watch
	 */
	public void unwatch(Watch watch) {
		this.watches.remove(watch);
		watch.removed = true;
	}

	/**
	 * Reads every watched service's instances now, on the control thread, as after a
	 * discovery announcement. Callable from any thread.
	 */
	public void pollNow() {
		this.control.execute(this::pollAll);
	}

	/**
	 * Reads every watched service's instances. Control thread.
	 */
	public void pollAll() {
		this.separately.forEach(this.watches, (watch) -> watch.serviceId, this::poll);
	}

	private void poll(Watch watch) {
		if (watch.polling) {
			// A read is under way, perhaps from before the change that asks for this
			// one: read again once it is in.
			watch.again = true;
			return;
		}
		watch.polling = true;
		Mono<List<ServiceInstance>> instances;
		try {
			instances = this.source.instances(watch.serviceId).timeout(FIRST_POLL_TIMEOUT);
		}
		catch (RuntimeException | Error ex) {
			// A source that throws, even an Error, is a failed read: the watch must not
			// stay "polling" for good.
			watch.polling = false;
			failed(watch, ex);
			return;
		}
		instances.subscribe((list) -> this.control.execute(() -> {
			watch.polling = false;
			if (!watch.removed) {
				answered(watch, list);
				pollAgainIfAsked(watch);
			}
		}), (error) -> this.control.execute(() -> {
			watch.polling = false;
			if (!watch.removed) {
				failed(watch, error);
				pollAgainIfAsked(watch);
			}
		}));
	}

	private void pollAgainIfAsked(Watch watch) {
		if (watch.again) {
			watch.again = false;
			poll(watch);
		}
	}

	private void failed(Watch watch, Throwable error) {
		String described = String.valueOf(error);
		if (!described.equals(watch.lastError)) {
			logger.warn("Could not read the instances of service " + watch.serviceId + "; keeping the last ones",
					error);
		}
		watch.lastError = described;
		watch.listener.ready();
	}

	private void answered(Watch watch, List<ServiceInstance> instances) {
		watch.lastError = null;
		List<Member> members = new ArrayList<>(instances.size());
		for (ServiceInstance instance : instances) {
			DiscoveryRejection rejection = DiscoveryRejection.of(instance);
			if (rejection != null) {
				rejected(watch, instance, rejection);
				continue;
			}
			members.add(Member.of(instance, weight(watch.serviceId, instance), priority(watch.serviceId, instance)));
		}
		Membership next = Membership.of(members);
		for (int i = next.members().size(); i < members.size(); i++) {
			watch.listener.rejected(DiscoveryRejection.DUPLICATE);
		}
		if (next.members().size() < members.size()) {
			report(watch.serviceId + "/duplicate",
					() -> "Service " + watch.serviceId
							+ " is listed with the same address more than once; balancing one instance of each address,"
							+ " the same one at every poll (the first by instance id)");
		}
		if (next.members().isEmpty() && !watch.membership.members().isEmpty() && !emptyConfirmed(watch)) {
			return;
		}
		watch.emptySinceNanos = 0;
		if (watch.membership.differsFrom(next)) {
			Membership previous = watch.membership;
			watch.membership = next;
			watch.listener.membersChanged(previous, next);
		}
		watch.listener.ready();
	}

	/**
	 * Returns whether a service that had endpoints has now been listed with none for long
	 * enough to believe it. Discovery can list a service empty for an instant that is not
	 * the truth: Spring Cloud re-binds the simple discovery client's properties in place
	 * on refresh, and a read in between sees none. Dropping every endpoint on such a read
	 * would answer 503 to every request until the next poll, so an empty list is applied
	 * only when a poll at least one interval later says so again.
	 */
	private boolean emptyConfirmed(Watch watch) {
		long now = this.control.nanoTime();
		if (watch.emptySinceNanos == 0) {
			watch.emptySinceNanos = now;
			return false;
		}
		return now - watch.emptySinceNanos >= POLL_INTERVAL.toNanos();
	}

	private void rejected(Watch watch, ServiceInstance instance, DiscoveryRejection rejection) {
		watch.listener.rejected(rejection);
		String described = "instance " + Logged.text(instance.getInstanceId()) + " (host "
				+ Logged.text(instance.getHost()) + ", port " + instance.getPort() + ")";
		report(watch.serviceId + "/" + described + "/" + rejection, () -> "Service " + watch.serviceId
				+ " lists an invalid " + described + ", " + rejection.tag() + "; skipping it, balancing the others");
	}

	private int weight(String serviceId, ServiceInstance instance) {
		Map<String, String> metadata = instance.getMetadata();
		// A registry may hand over no metadata at all: that is none.
		String weight = (metadata != null) ? metadata.get(InstanceWeights.METADATA_KEY) : null;
		String address = instance.getHost() + ":" + instance.getPort();
		int parsed;
		try {
			parsed = InstanceWeights.parse(weight);
		}
		catch (IllegalArgumentException ex) {
			report(serviceId + "/" + address + "/" + weight,
					() -> "Instance " + address + " of service " + serviceId + " has an invalid metadata weight "
							+ Logged.text(weight) + " (expected: an integer >= 0); balancing it with weight 1");
			return 1;
		}
		int capped = InstanceWeights.cap(parsed);
		if (capped != parsed) {
			report(serviceId + "/" + address + "/" + weight,
					() -> "Instance " + address + " of service " + serviceId + " has metadata weight " + parsed
							+ "; balancing it with the largest weight, " + InstanceWeights.MAX_WEIGHT);
		}
		return capped;
	}

	/**
	 * Returns an instance's priority level, its metadata {@code priority}: an integer
	 * from 0; {@link Endpoint#NO_PRIORITY} when absent, or invalid (logged once per
	 * instance and value), so that its zone decides.
	 */
	private int priority(String serviceId, ServiceInstance instance) {
		Map<String, String> metadata = instance.getMetadata();
		String priority = (metadata != null) ? metadata.get(Member.PRIORITY_KEY) : null;
		if (priority == null || priority.isBlank()) {
			return Endpoint.NO_PRIORITY;
		}
		try {
			int parsed = Integer.parseInt(priority.trim());
			if (parsed >= 0) {
				return parsed;
			}
		}
		catch (NumberFormatException ex) {
			// Reported below.
		}
		String address = instance.getHost() + ":" + instance.getPort();
		report(serviceId + "/" + address + "/priority/" + priority,
				() -> "Instance " + address + " of service " + serviceId + " has an invalid metadata priority "
						+ Logged.text(priority) + " (expected: an integer >= 0); its zone decides its level");
		return Endpoint.NO_PRIORITY;
	}

	/**
	 * Logs a warning once per key: a bad instance is seen at every poll, once a second.
	 * The keys are forgotten past {@value #MAX_REPORTED} so that a registry churning bad
	 * entries cannot grow the set for ever (the warnings then come again).
	 */
	private void report(String key, java.util.function.Supplier<String> message) {
		if (this.reported.size() >= MAX_REPORTED) {
			this.reported.clear();
		}
		if (this.reported.add(key)) {
			logger.warn(message.get());
		}
	}

	/**
	 * Hears of one service's discovery, on the control thread.
	 */
	public interface Listener {

		/**
		 * Called when the service's membership changed.
		 * @param previous the membership before, {@link Membership#EMPTY} at first
		 * @param next the membership now
		 */
		void membersChanged(Membership previous, Membership next);

		/**
		 * Called after every answer and every failure, and once
		 * {@link #FIRST_POLL_TIMEOUT} after the watch began: the service's endpoints are
		 * as known as they will be for now.
		 */
		void ready();

		/**
		 * Called for each instance of an answer that is not balanced: an invalid host or
		 * port, or a second instance with an address already listed.
		 * @param rejection why
		 */
		default void rejected(DiscoveryRejection rejection) {
		}

	}

	/**
	 * One watched service. Confined to the control thread.
	 */
	public static final class Watch {

		private final String serviceId;

		private final Listener listener;

		private Membership membership = Membership.EMPTY;

		private boolean polling;

		/**
		 * Whether the source said the service changed while a read was under way.
		 */
		private boolean again;

		private boolean removed;

		/**
		 * When a poll first listed the service empty after it had endpoints; 0 when not.
		 */
		private long emptySinceNanos;

		private @Nullable String lastError;

		private Watch(String serviceId, Listener listener) {
			this.serviceId = serviceId;
			this.listener = listener;
		}

		/**
		 * Returns the membership applied last. Control thread.
		 * @return the membership
		 */
		public Membership membership() {
			return this.membership;
		}

	}

}
