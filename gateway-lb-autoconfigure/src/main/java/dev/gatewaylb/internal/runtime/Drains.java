package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.discovery.DiscoveryPoller;
import dev.gatewaylb.internal.discovery.Member;

/**
 * Drains of endpoints, asked for by an operator or a peer: what
 * {@link ServiceRuntimes#drain} does on the control thread.
 */
final class Drains {

	/**
	 * The longest a drain waits for the control thread.
	 */
	static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

	private Drains() {
	}

	/**
	 * Tells a service's listeners of a snapshot a drain made.
	 */
	@FunctionalInterface
	interface Publisher {

		void publish(ServiceRuntime runtime, Snapshot<Member> previous, Snapshot<Member> next);

	}

	/**
	 * Starts or stops draining an endpoint: it takes no new picks, its requests in flight
	 * finish, and it stays drained while discovery keeps it. Takes effect before this
	 * returns. Blocks for the control thread, and right after start-up for the service's
	 * first instance list: not for event loops. A drain that would leave more than the
	 * service's {@code health.max-drain-percent} of its endpoints draining is refused
	 * unless forced.
	 * @param slot the service's slot
	 * @param control the control thread
	 * @param publisher tells the listeners of the new snapshot
	 * @param address the endpoint's {@code host:port}
	 * @param drain whether to drain
	 * @param force whether to drain beyond {@code health.max-drain-percent}
	 * @return what was done
	 */
	static Drain drain(ServiceSlots.Slot slot, ControlThread control, Publisher publisher, String address,
			boolean drain, boolean force) {
		try {
			// Right after start-up, discovery's first answer may not be in yet: the
			// endpoint to drain is not known before it.
			slot.ready.get(DiscoveryPoller.FIRST_POLL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			return control.call(DRAIN_TIMEOUT, () -> {
				ServiceRuntime runtime = slot.runtime;
				if (runtime == null) {
					return Drain.NOT_AN_ENDPOINT;
				}
				Snapshot<Member> previous = runtime.snapshot();
				if (drain && !force
						&& !runtime.settings().health().allowsDrain(draining(previous, address), previous.size())) {
					return Drain.OVER_MAX_DRAIN_PERCENT;
				}
				Snapshot<Member> next = runtime.balancer().drain(address, drain);
				if (next != null && next != previous) {
					publisher.publish(runtime, previous, next);
				}
				return (next != null) ? Drain.DONE : Drain.NOT_AN_ENDPOINT;
			});
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while draining " + address, ex);
		}
		catch (ExecutionException | TimeoutException | IllegalStateException ex) {
			throw new IllegalStateException("could not drain " + address + " of " + slot.id, ex);
		}
	}

	/**
	 * Returns how many endpoints of a snapshot drain, not counting {@code address}: a
	 * drain of an endpoint already draining is no new drain.
	 */
	private static int draining(Snapshot<Member> snapshot, String address) {
		int draining = 0;
		for (int i = 0; i < snapshot.size(); i++) {
			if (snapshot.isDraining(i) && !snapshot.endpoint(i).address().equals(address)) {
				draining++;
			}
		}
		return draining;
	}

	/**
	 * Returns the endpoints that drain, by service id: what a replica that starts takes
	 * from its peers.
	 * @param snapshots every service's snapshot, by id
	 * @return the drained endpoints' {@code host:port}, by service id, sorted
	 */
	static Map<String, List<String>> drained(Map<String, Snapshot<Member>> snapshots) {
		Map<String, List<String>> drained = new TreeMap<>();
		snapshots.forEach((id, snapshot) -> {
			for (int i = 0; i < snapshot.size(); i++) {
				if (snapshot.isDraining(i)) {
					drained.computeIfAbsent(id, (key) -> new ArrayList<>()).add(snapshot.endpoint(i).address());
				}
			}
		});
		return drained;
	}

}
