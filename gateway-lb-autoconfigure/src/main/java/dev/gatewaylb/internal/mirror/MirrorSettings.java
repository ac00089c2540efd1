package dev.gatewaylb.internal.mirror;

import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import java.util.List;
import java.util.Locale;
import dev.gatewaylb.config.MirrorCompare;
import dev.gatewaylb.config.MirrorProperties;
import dev.gatewaylb.internal.config.Layers;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.unit.DataSize;

/**
 * A service's traffic mirroring to a shadow service ({@code mirror}).
 *
 * @param target the shadow's service id, in lower case, or {@code null} for no mirroring
 * @param percent the share of requests mirrored, 0 to 100
 * @param maxConcurrent the most mirrored requests in flight
 * @param maxBodyBytes the largest request body copied
 * @param compare what of the answers is compared
 * @param methods the methods mirrored, upper case
 * @param stripHeaders the request headers the copy goes without (case does not matter)
 */
public record MirrorSettings(@Nullable String target, int percent, int maxConcurrent, long maxBodyBytes,
		Compare compare, Set<String> methods, List<String> stripHeaders) {

	/**
	 * No mirroring.
	 */
	public static final MirrorSettings NONE = new MirrorSettings(null, 100, 64, 64 * 1024, Compare.STATUS,
			Set.of("GET", "HEAD"), List.of("Authorization", "Cookie", "Proxy-Authorization"));

	public MirrorSettings {
		Objects.requireNonNull(compare, "compare");
		methods = Set.copyOf(methods);
		stripHeaders = List.copyOf(stripHeaders);
	}

	/**
	 * Returns whether the service mirrors.
	 * @return whether a target is set
	 */
	public boolean enabled() {
		return this.target != null;
	}

	/**
	 * What of the answers is compared.
	 */
	public enum Compare {

		/**
		 * Nothing.
		 */
		NONE,

		/**
		 * The status class.
		 */
		STATUS,

		/**
		 * The status class and a digest of the body.
		 */
		BODY

	}

	/**
	 * Returns the mirroring of a rollout's shadow stage: every GET and HEAD of the split,
	 * the status compared, at most {@code max-concurrent}'s default in flight, without
	 * the headers the service strips from its mirrors.
	 * @param target the rollout's target
	 * @param stripHeaders the headers the copy goes without
	 * @return the settings
	 */
	public static MirrorSettings shadowStage(String target, List<String> stripHeaders) {
		return new MirrorSettings(target.toLowerCase(Locale.ROOT), 100, NONE.maxConcurrent(), NONE.maxBodyBytes(),
				Compare.STATUS, NONE.methods(), stripHeaders);
	}

	/**
	 * The built-in defaults of the {@code mirror} block: off.
	 */
	public static final MirrorProperties BUILT_IN = new MirrorProperties("", 100, 64, DataSize.ofKilobytes(64),
			MirrorCompare.STATUS, List.of("GET", "HEAD"), List.of("Authorization", "Cookie", "Proxy-Authorization"));

	/**
	 * Maps a service's {@code mirror} block, or rejects a target set under
	 * {@code defaults} (every service mirrored to one shadow, itself included: never what
	 * is meant) or naming the service itself.
	 * @param mirror the block's layers
	 * @return the settings
	 * @throws InvalidConfigurationPropertyValueException naming the key and its value
	 */
	public static MirrorSettings map(Layers.Group<MirrorProperties> mirror) {
		Layers layers = mirror.layers();
		String target = mirror.get(MirrorProperties::target).trim();
		if (!target.isEmpty() && layers.isDefaults()) {
			throw new InvalidConfigurationPropertyValueException(Layers.DEFAULTS_PATH + ".mirror.target", target,
					"expected: set per service, under gateway.lb.services.<id>.mirror");
		}
		if (!target.isEmpty() && target.equalsIgnoreCase(layers.serviceId())) {
			throw new InvalidConfigurationPropertyValueException(layers.path() + ".mirror.target", target,
					"expected: another service than the one mirrored");
		}
		Compare compare = switch (mirror.get(MirrorProperties::compare)) {
			case NONE -> Compare.NONE;
			case STATUS -> Compare.STATUS;
			case BODY -> Compare.BODY;
		};
		return new MirrorSettings(target.isEmpty() ? null : target.toLowerCase(Locale.ROOT),
				mirror.get(MirrorProperties::percent), mirror.get(MirrorProperties::maxConcurrent),
				mirror.get(MirrorProperties::maxBody).toBytes(), compare,
				Set.copyOf(mirror.get(MirrorProperties::methods)), mirror.get(MirrorProperties::stripHeaders));
	}

}
