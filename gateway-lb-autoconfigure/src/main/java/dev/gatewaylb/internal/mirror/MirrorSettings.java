package dev.gatewaylb.internal.mirror;

import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import java.util.List;
import java.util.Locale;
import dev.gatewaylb.config.MirrorCompare;
import dev.gatewaylb.config.MirrorProperties;
import dev.gatewaylb.internal.config.Layers;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.unit.DataSize;
import org.springframework.util.unit.DataUnit;

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
	 * The most bytes a service's mirrored bodies may hold at once, max-concurrent x
	 * max-body: 1GB. Each copy in flight is held in memory until the shadow has it, and a
	 * gateway's heap must keep room for its own work; each key alone is bounded where it
	 * is bound.
	 */
	public static final long MAX_BYTES_HELD = DataSize.ofGigabytes(1).toBytes();

	/**
	 * Maps a service's {@code mirror} block, or rejects a target set under
	 * {@code defaults} (every service mirrored to one shadow, itself included: never what
	 * is meant) or naming the service itself, or copies that would hold more than
	 * {@link #MAX_BYTES_HELD} at once (named at the key of the most specific layer).
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
		int maxConcurrent = mirror.get(MirrorProperties::maxConcurrent);
		long maxBody = mirror.get(MirrorProperties::maxBody).toBytes();
		// Each is at most 65536 and 1GB where it is bound: the product fits a long.
		if (maxConcurrent * maxBody > MAX_BYTES_HELD) {
			if (layerRank(mirror, MirrorProperties::maxConcurrent, "max-concurrent") > layerRank(mirror,
					MirrorProperties::maxBody, "max-body")) {
				throw new InvalidConfigurationPropertyValueException(
						mirror.pathOf(MirrorProperties::maxConcurrent, "max-concurrent"), maxConcurrent,
						"expected: at most " + MAX_BYTES_HELD / maxBody + ", since max-concurrent copies of max-body ("
								+ size(maxBody) + ") are held in memory at once, " + size(MAX_BYTES_HELD) + " at most");
			}
			throw new InvalidConfigurationPropertyValueException(mirror.pathOf(MirrorProperties::maxBody, "max-body"),
					size(maxBody),
					"expected: at most " + size(MAX_BYTES_HELD / maxConcurrent) + ", since max-concurrent ("
							+ maxConcurrent + ") copies of max-body are held in memory at once, " + size(MAX_BYTES_HELD)
							+ " at most");
		}
		Compare compare = switch (mirror.get(MirrorProperties::compare)) {
			case NONE -> Compare.NONE;
			case STATUS -> Compare.STATUS;
			case BODY -> Compare.BODY;
		};
		return new MirrorSettings(target.isEmpty() ? null : target.toLowerCase(Locale.ROOT),
				mirror.get(MirrorProperties::percent), maxConcurrent, maxBody, compare,
				Set.copyOf(mirror.get(MirrorProperties::methods)), mirror.get(MirrorProperties::stripHeaders));
	}

	/**
	 * Returns 2 when the service's own layer sets a key, 1 when only the defaults do, 0
	 * when it is built in: the key set closest to the service is the one to name.
	 */
	private static int layerRank(Layers.Group<MirrorProperties> mirror, Function<MirrorProperties, ?> key,
			String name) {
		if (!mirror.isSet(key)) {
			return 0;
		}
		return mirror.pathOf(key, name).startsWith(mirror.layers().path() + ".") ? 2 : 1;
	}

	/**
	 * Returns a size as the YAML spells it: {@code 16KB}, {@code 1GB}, {@code 1000B}.
	 */
	private static String size(long bytes) {
		for (DataUnit unit : new DataUnit[] { DataUnit.GIGABYTES, DataUnit.MEGABYTES, DataUnit.KILOBYTES }) {
			long unitBytes = DataSize.of(1, unit).toBytes();
			if (bytes != 0 && bytes % unitBytes == 0) {
				return bytes / unitBytes + unit.name().substring(0, 1) + "B";
			}
		}
		return bytes + "B";
	}

}
