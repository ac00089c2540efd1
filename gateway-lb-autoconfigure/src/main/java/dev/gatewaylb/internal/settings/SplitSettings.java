package dev.gatewaylb.internal.settings;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.gatewaylb.internal.config.CookieSettings;
import dev.gatewaylb.request.Cidr;
import dev.gatewaylb.internal.rollout.RolloutPlan;
import dev.gatewaylb.internal.split.Split;
import org.jspecify.annotations.Nullable;

/**
 * The runtime form of one {@code gateway.lb.splits.<name>} entry.
 *
 * @param split the compiled weighted choice
 * @param sticky the sticky cookie, or {@code null} for a fresh choice per request
 * @param overrideHeader the header testers use to force a target, or {@code null}
 * @param overrideTrustedClients the networks whose override is honoured, empty for
 * nobody's
 * @param rollout the progressive rollout of one target, or {@code null}
 * @param rolloutLayouts the split's layout at each of the rollout's steps, then with the
 * target at 0% (rolled back); empty without a rollout. Derived from the split and the
 * rollout, so that a step changes the request path's layout by an index, not by a build
 * @param rolloutTarget the index of the rollout's target among the split's targets, -1
 * without a rollout; derived, so that a request does not search for it
 */
public record SplitSettings(Split split, @Nullable CookieSettings sticky, @Nullable String overrideHeader,
		List<Cidr> overrideTrustedClients, @Nullable RolloutPlan rollout, List<Split> rolloutLayouts,
		int rolloutTarget) {

	public SplitSettings {
		Objects.requireNonNull(split, "split");
		overrideTrustedClients = List.copyOf(overrideTrustedClients);
		rolloutLayouts = List.copyOf(rolloutLayouts);
	}

	/**
	 * Creates the settings, the rollout's layouts derived.
	 * @param split the compiled weighted choice
	 * @param sticky the sticky cookie, or {@code null}
	 * @param overrideHeader the override header, or {@code null}
	 * @param overrideTrustedClients the networks whose override is honoured
	 * @param rollout the rollout, or {@code null}
	 * @throws IllegalArgumentException when the rollout's target is not a target of the
	 * split, or the other targets' weights sum to 0
	 */
	public SplitSettings(Split split, @Nullable CookieSettings sticky, @Nullable String overrideHeader,
			List<Cidr> overrideTrustedClients, @Nullable RolloutPlan rollout) {
		this(split, sticky, overrideHeader, overrideTrustedClients, rollout, layouts(split, rollout),
				(rollout != null) ? split.indexOf(rollout.target()) : -1);
	}

	/**
	 * Returns the layout the request path uses at a rollout's position.
	 * @param index a step's index, or the number of steps for rolled back, of a rollout
	 * of this plan (see {@code SplitRollouts#track(String, RolloutPlan)}); 0 without one
	 * @return the layout; the split itself when there is no rollout
	 */
	public Split layout(int index) {
		List<Split> layouts = this.rolloutLayouts;
		return layouts.isEmpty() ? this.split : layouts.get(index);
	}

	private static List<Split> layouts(Split split, @Nullable RolloutPlan rollout) {
		if (rollout == null) {
			return List.of();
		}
		int target = split.indexOf(rollout.target());
		if (target < 0) {
			throw new IllegalArgumentException(
					"target: " + rollout.target() + " (expected: one of the split's targets)");
		}
		List<Split> layouts = new ArrayList<>();
		for (int percent : rollout.steps()) {
			layouts.add(split.withShare(target, percent));
		}
		layouts.add(split.withShare(target, 0));
		return layouts;
	}

	/**
	 * Returns whether a client at {@code address} may choose the target with the override
	 * header.
	 * @param address the client's address as resolved through the trusted proxies
	 * @return whether one of {@link #overrideTrustedClients()} contains it
	 */
	public boolean trustsOverrideFrom(InetAddress address) {
		return Cidr.anyContains(this.overrideTrustedClients, address);
	}

}
