package dev.gatewaylb.internal.discovery;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.gatewaylb.internal.balance.Endpoint;

/**
 * A service's members as a set: what discovery reported, in
 * {@link Endpoint#CANONICAL_ORDER}, one member per address (of duplicates, the first by
 * instance id, then the heavier, whatever the order they were listed in). Two memberships
 * are the same when they hold the same addresses with the same weights and schemes,
 * whatever order discovery listed them in: that is the rebuild-or-keep decision, so a
 * registry that reshuffles its list at every fetch (Eureka's client does) causes no
 * rebuild.
 *
 * @param members the members, in canonical order
 */
public record Membership(List<Member> members) {

	/**
	 * No members.
	 */
	public static final Membership EMPTY = new Membership(List.of());

	/**
	 * Orders duplicates of one address: by instance id (none last), then the heavier.
	 */
	private static final Comparator<Member> DUPLICATES_ORDER = Comparator
		.comparing((Member member) -> member.endpoint().address())
		.thenComparing((Member member) -> member.instance().getInstanceId(),
				Comparator.nullsLast(Comparator.naturalOrder()))
		.thenComparing((Member member) -> member.endpoint().weight(), Comparator.reverseOrder());

	public Membership {
		members = List.copyOf(members);
	}

	/**
	 * Returns the membership of members listed in any order.
	 * @param listed the members as discovery listed them
	 * @return the membership
	 */
	public static Membership of(Collection<Member> listed) {
		if (listed.isEmpty()) {
			return EMPTY;
		}
		Map<String, Member> byAddress = new HashMap<>();
		List<Member> members = new ArrayList<>(listed.size());
		// Of two instances with one address, the same one is kept whatever order the
		// registry lists them in (the first by instance id, then the heavier), so that a
		// reshuffled list with duplicates is no change.
		List<Member> ordered = new ArrayList<>(listed);
		ordered.sort(DUPLICATES_ORDER);
		for (Member member : ordered) {
			if (byAddress.putIfAbsent(member.endpoint().address(), member) == null) {
				members.add(member);
			}
		}
		members.sort((a, b) -> Endpoint.CANONICAL_ORDER.compare(a.endpoint(), b.endpoint()));
		return new Membership(members);
	}

	/**
	 * Returns whether the balancer must be rebuilt to go from this membership to
	 * {@code next}: an address joined or left, or a weight or scheme changed.
	 * @param next the membership discovery reports now
	 * @return whether anything that balancing or routing reads changed
	 */
	public boolean differsFrom(Membership next) {
		if (this.members.size() != next.members.size()) {
			return true;
		}
		for (int i = 0; i < this.members.size(); i++) {
			if (!this.members.get(i).sameAs(next.members.get(i))) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the members of this membership whose address {@code next} does not have.
	 * @param next the next membership
	 * @return the departed members
	 */
	public List<Member> departedIn(Membership next) {
		Set<String> staying = new TreeSet<>();
		next.members.forEach((member) -> staying.add(member.endpoint().address()));
		return this.members.stream().filter((member) -> !staying.contains(member.endpoint().address())).toList();
	}

}
