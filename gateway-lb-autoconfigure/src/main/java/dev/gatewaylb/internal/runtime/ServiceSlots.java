package dev.gatewaylb.internal.runtime;

import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.gatewaylb.internal.discovery.DiscoveryPoller;
import org.jspecify.annotations.Nullable;

/**
 * The tracked services of {@link ServiceRuntimes}, by lower-case id and by the first few
 * other spellings a look-up used: a look-up is one map read. Thread-safe: a concurrent
 * map; a slot's runtime is one volatile field.
 */
final class ServiceSlots {

	private final Map<String, Slot> slots = new ConcurrentHashMap<>();

	/**
	 * Returns the slot of a service, made if it has none.
	 * @param serviceId the id in any spelling
	 * @param created told of a slot this call made
	 * @return the slot
	 */
	Slot slotOf(String serviceId, Consumer<Slot> created) {
		Slot found = find(serviceId);
		if (found != null) {
			return found;
		}
		String id = serviceId.toLowerCase(Locale.ROOT);
		boolean[] made = new boolean[1];
		Slot slot = this.slots.computeIfAbsent(id, (key) -> {
			made[0] = true;
			return new Slot(key);
		});
		if (made[0]) {
			created.accept(slot);
		}
		return slot;
	}

	/**
	 * Returns the slot of a service.
	 * @param serviceId the id in any spelling
	 * @return the slot, or {@code null} when the service is not tracked
	 */
	@Nullable Slot find(String serviceId) {
		Slot slot = this.slots.get(serviceId);
		if (slot == null) {
			String id = serviceId.toLowerCase(Locale.ROOT);
			if (!id.equals(serviceId)) {
				slot = this.slots.get(id);
				if (slot != null && slot.spellings.incrementAndGet() <= Slot.MAX_SPELLINGS) {
					// A spelling remembered saves the lower-casing of the next look-up
					// (Eureka's ids are upper-case). A request can name a service in
					// any mixture of cases, so only the first few are kept: the map
					// stays bounded.
					this.slots.putIfAbsent(serviceId, slot);
				}
			}
		}
		return slot;
	}

	/**
	 * Returns how many keys the map holds, spellings included.
	 */
	int keys() {
		return this.slots.size();
	}

	Collection<Slot> distinct() {
		Map<Slot, Boolean> distinct = new IdentityHashMap<>();
		this.slots.values().forEach((slot) -> distinct.put(slot, true));
		return distinct.keySet();
	}

	/**
	 * Forgets a slot under every spelling.
	 */
	void remove(Slot slot) {
		this.slots.values().removeIf((tracked) -> tracked == slot);
	}

	/**
	 * One tracked service. {@link #runtime} is written on the control thread and read by
	 * requests; {@link #watch} is confined to the control thread.
	 */
	static final class Slot {

		/**
		 * The most spellings of an id besides the lower-case one remembered as keys.
		 */
		static final int MAX_SPELLINGS = 8;

		final String id;

		final AtomicInteger spellings = new AtomicInteger();

		final CompletableFuture<ServiceRuntime> ready = new CompletableFuture<>();

		volatile @Nullable ServiceRuntime runtime;

		DiscoveryPoller.@Nullable Watch watch;

		/**
		 * Since when no route, configuration, split or discovery names the service, or
		 * {@code null}. Control thread.
		 */
		@Nullable Long unknownSince;

		Slot(String id) {
			this.id = id;
		}

	}

}
