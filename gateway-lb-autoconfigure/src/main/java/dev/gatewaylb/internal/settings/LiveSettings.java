package dev.gatewaylb.internal.settings;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import dev.gatewaylb.config.GatewayLbProperties;
import org.jspecify.annotations.Nullable;

/**
 * The {@link GatewayLbSettings} in force, swapped whole by a refresh and read by every
 * pick and every split: one volatile read, no lock. A rejected refresh leaves the
 * settings as they were and keeps its error until a later refresh succeeds.
 */
public final class LiveSettings {

	private volatile State state;

	private final List<Consumer<GatewayLbSettings>> listeners = new CopyOnWriteArrayList<>();

	private final AtomicLong applied = new AtomicLong();

	private final AtomicLong rejected = new AtomicLong();

	/**
	 * Starts with the settings bound at start-up, generation 1.
	 * @param initial the settings
	 */
	public LiveSettings(GatewayLbSettings initial) {
		this.state = new State(Objects.requireNonNull(initial, "initial"), 1, null, initial.properties());
	}

	/**
	 * Returns the settings in force.
	 * @return the settings
	 */
	public GatewayLbSettings get() {
		return this.state.settings;
	}

	/**
	 * Returns {@code gateway.lb} as the last start-up or refresh that was not rejected
	 * bound it: what the settings in force were mapped from, as
	 * {@code /actuator/configprops} shows it. After a refresh that changed only the
	 * spelling (equal settings), the new spelling.
	 * @return the properties
	 */
	public GatewayLbProperties properties() {
		return this.state.properties;
	}

	/**
	 * Returns how many settings have been in force, 1 for those bound at start-up.
	 * @return the generation
	 */
	public long generation() {
		return this.state.generation;
	}

	/**
	 * Returns why the last refresh was rejected.
	 * @return the error, or {@code null} when the last refresh succeeded
	 */
	public @Nullable String lastError() {
		return this.state.lastError;
	}

	/**
	 * Puts new settings in force and clears the last error. Settings equal to those in
	 * force change nothing but the last error and the {@link #properties() properties}
	 * shown: the settings and the generation stay, no listener is called, and the refresh
	 * does not count as applied, so balancers and pools are not rebuilt for a refresh
	 * that changed nothing.
	 * @param settings the settings
	 * @return whether the settings differ from those in force and were put in force
	 */
	public synchronized boolean apply(GatewayLbSettings settings) {
		Objects.requireNonNull(settings, "settings");
		if (settings.equals(this.state.settings)) {
			this.state = new State(this.state.settings, this.state.generation, null, settings.properties());
			return false;
		}
		this.state = new State(settings, this.state.generation + 1, null, settings.properties());
		this.applied.incrementAndGet();
		this.listeners.forEach((listener) -> listener.accept(settings));
		return true;
	}

	/**
	 * Records a rejected refresh; the settings in force stay.
	 * @param error the property, value and reason
	 */
	public synchronized void reject(String error) {
		this.state = new State(this.state.settings, this.state.generation, error, this.state.properties);
		this.rejected.incrementAndGet();
	}

	/**
	 * Calls {@code listener} with the settings in force now and with every settings
	 * applied later, on the thread that applies them.
	 * @param listener the listener
	 */
	public synchronized void onApply(Consumer<GatewayLbSettings> listener) {
		this.listeners.add(listener);
		listener.accept(this.state.settings);
	}

	/**
	 * Returns how many refreshes were applied since start-up.
	 * @return the count
	 */
	public long appliedRefreshes() {
		return this.applied.get();
	}

	/**
	 * Returns how many refreshes were rejected since start-up.
	 * @return the count
	 */
	public long rejectedRefreshes() {
		return this.rejected.get();
	}

	private record State(GatewayLbSettings settings, long generation, @Nullable String lastError,
			GatewayLbProperties properties) {
	}

}
