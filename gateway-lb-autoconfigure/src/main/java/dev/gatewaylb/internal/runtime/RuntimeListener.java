package dev.gatewaylb.internal.runtime;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import org.jspecify.annotations.Nullable;

/**
 * Hears of new runtimes and snapshots, on the control thread
 * ({@link ServiceRuntimes#addListener}).
 */
public interface RuntimeListener {

	/**
	 * Called when a service gets a runtime, first or new.
	 * @param previous the runtime it replaces, or {@code null} for the first
	 * @param next the runtime now in force
	 */
	default void runtimeChanged(@Nullable ServiceRuntime previous, ServiceRuntime next) {
	}

	/**
	 * Called when a service's runtime was removed: nothing names the service any more.
	 * @param runtime the runtime removed
	 */
	default void runtimeRemoved(ServiceRuntime runtime) {
	}

	/**
	 * Called when a service's balancer published a snapshot after a membership change, a
	 * settings change or a drain.
	 * @param runtime the service's runtime
	 * @param previous the snapshot before
	 * @param next the snapshot now in force
	 */
	default void snapshotChanged(ServiceRuntime runtime, Snapshot<Member> previous, Snapshot<Member> next) {
	}

}
