package dev.gatewaylb.internal.config;

import java.util.Objects;
import java.util.function.Function;

import dev.gatewaylb.config.ServiceProperties;
import org.jspecify.annotations.Nullable;

/**
 * The layers one service's keys come from, most specific first: the service's own
 * ({@code gateway.lb.services.<id>}), {@code gateway.lb.defaults}, and the built-in
 * defaults, which set every key. A list is one key, taken whole from the first layer that
 * sets it. A feature maps its block through a {@link Group}.
 */
public final class Layers {

	/**
	 * The property path of the defaults layer.
	 */
	public static final String DEFAULTS_PATH = "gateway.lb.defaults";

	private static final String SERVICES_PATH = "gateway.lb.services";

	private final String path;

	private final ServiceProperties service;

	private final ServiceProperties defaults;

	private final ServiceProperties builtIn;

	/**
	 * Creates the layers of one service.
	 * @param path the property path of {@code service}, such as
	 * {@code gateway.lb.services.catalog}, for messages
	 * @param service the keys the service sets
	 * @param defaults the keys {@code gateway.lb.defaults} sets
	 * @param builtIn the built-in defaults, every key set
	 */
	public Layers(String path, ServiceProperties service, ServiceProperties defaults, ServiceProperties builtIn) {
		this.path = Objects.requireNonNull(path, "path");
		this.service = Objects.requireNonNull(service, "service");
		this.defaults = Objects.requireNonNull(defaults, "defaults");
		this.builtIn = Objects.requireNonNull(builtIn, "builtIn");
	}

	/**
	 * Returns the property path of the service's own layer.
	 * @return the path
	 */
	public String path() {
		return this.path;
	}

	/**
	 * Returns whether these are the layers of {@code gateway.lb.defaults} itself.
	 * @return whether the defaults
	 */
	public boolean isDefaults() {
		return this.path.equals(DEFAULTS_PATH);
	}

	/**
	 * Returns the service id of the layers' path: {@code catalog} of
	 * {@code gateway.lb.services.catalog}, {@code a.b} of
	 * {@code gateway.lb.services[a.b]}, empty for the defaults.
	 * @return the id as written
	 */
	public String serviceId() {
		if (!this.path.startsWith(SERVICES_PATH)) {
			return "";
		}
		String rest = this.path.substring(SERVICES_PATH.length());
		return rest.startsWith("[") ? rest.substring(1, rest.length() - 1) : rest.substring(1);
	}

	/**
	 * Returns a key's value from the first layer that sets it.
	 * @param <T> the value's type
	 * @param key the key's accessor
	 * @return the value
	 */
	public <T> T get(Function<ServiceProperties, @Nullable T> key) {
		T value = key.apply(this.service);
		if (value == null) {
			value = key.apply(this.defaults);
		}
		if (value == null) {
			value = key.apply(this.builtIn);
		}
		return Objects.requireNonNull(value, "a key without a built-in default");
	}

	/**
	 * Returns a key's value from the first layer that sets it, for a key whose built-in
	 * default is not a value a binder makes (an empty map).
	 * @param <T> the value's type
	 * @param key the key's accessor
	 * @param builtIn the built-in default
	 * @return the value
	 */
	public <T> T find(Function<ServiceProperties, @Nullable T> key, T builtIn) {
		T value = key.apply(this.service);
		if (value == null) {
			value = key.apply(this.defaults);
		}
		return (value != null) ? value : builtIn;
	}

	/**
	 * Returns whether the service or the defaults set a key.
	 * @param key the key's accessor
	 * @return whether set
	 */
	public boolean isSet(Function<ServiceProperties, ?> key) {
		return key.apply(this.service) != null || key.apply(this.defaults) != null;
	}

	/**
	 * Returns the full property path of {@code name} in the layer its value comes from;
	 * the built-in defaults are reported as {@code defaults}, where a user would change
	 * them.
	 * @param key the key's accessor
	 * @param name the key's name under the service, such as {@code retry.attempts}
	 * @return the path
	 */
	public String pathOf(Function<ServiceProperties, ?> key, String name) {
		return ((key.apply(this.service) != null) ? this.path : DEFAULTS_PATH) + "." + name;
	}

	/**
	 * Returns the layers of one block of keys.
	 * @param <G> the block's binding record
	 * @param group the block's accessor
	 * @param name the block's name under the service, such as {@code affinity}
	 * @return the block's layers
	 */
	public <G> Group<G> group(Function<ServiceProperties, @Nullable G> group, String name) {
		return new Group<>(group, name);
	}

	/**
	 * Returns a key nested in a group, {@code null} when the layer does not set the
	 * group.
	 * @param <G> the group's binding record
	 * @param <T> the value's type
	 * @param group the group's accessor
	 * @param key the key's accessor in the group
	 * @return the key's accessor in a layer
	 */
	public static <G, T> Function<ServiceProperties, @Nullable T> in(Function<ServiceProperties, @Nullable G> group,
			Function<G, @Nullable T> key) {
		return (layer) -> {
			G value = group.apply(layer);
			return (value != null) ? key.apply(value) : null;
		};
	}

	/**
	 * The layers of one block of a service's keys ({@code affinity}, {@code hedge}): what
	 * a feature maps its settings from.
	 *
	 * @param <G> the block's binding record
	 */
	public final class Group<G> {

		private final Function<ServiceProperties, @Nullable G> group;

		private final String name;

		private Group(Function<ServiceProperties, @Nullable G> group, String name) {
			this.group = group;
			this.name = name;
		}

		/**
		 * Returns the layers the block is in.
		 * @return the layers
		 */
		public Layers layers() {
			return Layers.this;
		}

		/**
		 * Returns a key's value from the first layer that sets it.
		 * @param <T> the value's type
		 * @param key the key's accessor in the block
		 * @return the value
		 */
		public <T> T get(Function<G, @Nullable T> key) {
			return Layers.this.get(in(this.group, key));
		}

		/**
		 * Returns a key's value from the first layer that sets it, or {@code builtIn}.
		 * @param <T> the value's type
		 * @param key the key's accessor in the block
		 * @param builtIn the built-in default
		 * @return the value
		 */
		public <T> T find(Function<G, @Nullable T> key, T builtIn) {
			return Layers.this.find(in(this.group, key), builtIn);
		}

		/**
		 * Returns whether the service or the defaults set a key.
		 * @param key the key's accessor in the block
		 * @return whether set
		 */
		public boolean isSet(Function<G, ?> key) {
			return Layers.this.isSet(in(this.group, key));
		}

		/**
		 * Returns the full property path of a key of the block in the layer its value
		 * comes from.
		 * @param key the key's accessor in the block
		 * @param name the key's name in the block, such as {@code same-site}
		 * @return the path, such as
		 * {@code gateway.lb.services.catalog.affinity.same-site}
		 */
		public String pathOf(Function<G, ?> key, String name) {
			return Layers.this.pathOf(in(this.group, key), this.name + "." + name);
		}

	}

}
