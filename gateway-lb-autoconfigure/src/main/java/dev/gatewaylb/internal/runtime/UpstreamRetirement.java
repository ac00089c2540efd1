package dev.gatewaylb.internal.runtime;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import dev.gatewaylb.internal.control.ControlThread;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.discovery.Membership;
import dev.gatewaylb.internal.upstream.Upstream;
import org.jspecify.annotations.Nullable;

/**
 * Closes pools once nothing uses them, on the control thread: an upstream a settings
 * change replaced once no connection of it is in use, and the pools of endpoints that
 * left discovery after a grace.
 */
final class UpstreamRetirement {

	/**
	 * How often a replaced upstream is checked for requests still using it.
	 */
	static final Duration RETIRE_CHECK = Duration.ofSeconds(1);

	/**
	 * How long the pools of an endpoint that left discovery stay open: requests that
	 * picked it just before it left still get their connection, and an endpoint that
	 * comes back at once keeps its connections.
	 */
	static final Duration DEPARTED_GRACE = Duration.ofSeconds(2);

	private final ControlThread control;

	UpstreamRetirement(ControlThread control) {
		this.control = control;
	}

	/**
	 * Closes a replaced upstream once no connection of it is in use, checking every
	 * {@link #RETIRE_CHECK}: a request that took the old runtime just before the swap has
	 * acquired its connection long before the first check.
	 * @param upstream the upstream no runtime uses any more
	 */
	void retire(Upstream upstream) {
		this.control.after(RETIRE_CHECK, () -> {
			if (upstream.isIdle()) {
				upstream.close().subscribe();
			}
			else {
				retire(upstream);
			}
		});
	}

	/**
	 * Closes, after {@link #DEPARTED_GRACE}, the pools of endpoints that left a service,
	 * unless they came back by then.
	 * @param departed the members that left
	 * @param upstream the service's upstream then in force, or {@code null}
	 * @param membership the service's membership then
	 */
	void departed(List<Member> departed, Supplier<@Nullable Upstream> upstream, Supplier<Membership> membership) {
		this.control.after(DEPARTED_GRACE, () -> {
			Upstream current = upstream.get();
			if (current == null) {
				return;
			}
			Set<String> present = new HashSet<>();
			membership.get().members().forEach((member) -> present.add(member.endpoint().address()));
			for (Member member : departed) {
				if (!present.contains(member.endpoint().address())) {
					current.endpointLeft(member.host(), member.port());
				}
			}
		});
	}

}
