package dev.gatewaylb.internal.settings;

import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * A service's traffic mirroring to a shadow service ({@code mirror}).
 *
 * @param target the shadow's service id, in lower case, or {@code null} for no mirroring
 * @param percent the share of requests mirrored, 0 to 100
 * @param maxConcurrent the most mirrored requests in flight
 * @param maxBodyBytes the largest request body copied
 * @param compare what of the answers is compared
 * @param methods the methods mirrored, upper case
 */
public record MirrorSettings(@Nullable String target, int percent, int maxConcurrent, long maxBodyBytes,
		Compare compare, Set<String> methods) {

	/**
	 * No mirroring.
	 */
	public static final MirrorSettings NONE = new MirrorSettings(null, 100, 64, 64 * 1024, Compare.STATUS,
			Set.of("GET", "HEAD"));

	public MirrorSettings {
		Objects.requireNonNull(compare, "compare");
		methods = Set.copyOf(methods);
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

}
