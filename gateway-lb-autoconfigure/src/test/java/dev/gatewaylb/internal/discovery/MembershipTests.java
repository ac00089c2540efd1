package dev.gatewaylb.internal.discovery;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rebuild-or-keep decision: membership is a set of addresses with weights and
 * schemes, whatever order discovery lists it in.
 */
class MembershipTests {

	@Test
	void keepsTheBalancerWhenDiscoveryReshufflesTheSameSet() {
		List<Member> listed = new ArrayList<>(
				List.of(member("10.0.0.2", 80, 5, false), member("10.0.0.10", 80, 1, false),
						member("10.0.0.1", 8080, 2, false), member("api.internal", 80, 1, false)));
		Membership first = Membership.of(listed);
		long seed = 7;
		Random random = new Random(seed);
		for (int i = 0; i < 20; i++) {
			Collections.shuffle(listed, random);
			assertThat(first.differsFrom(Membership.of(listed))).as("seed %d, order %s", seed, listed).isFalse();
		}
	}

	@Test
	void listsMembersInCanonicalOrder() {
		Membership membership = Membership
			.of(List.of(member("api.internal", 80, 1, false), member("10.0.0.10", 80, 1, false),
					member("10.0.0.2", 9002, 1, false), member("10.0.0.2", 10000, 1, false)));
		assertThat(membership.members()).extracting((member) -> member.endpoint().address())
			.containsExactly("10.0.0.2:9002", "10.0.0.2:10000", "10.0.0.10:80", "api.internal:80");
	}

	@Test
	void rebuildsWhenAnEndpointJoinsLeavesOrChangesItsWeightOrScheme() {
		Membership base = Membership.of(List.of(member("10.0.0.1", 80, 1, false), member("10.0.0.2", 80, 1, false)));
		assertThat(base.differsFrom(Membership.of(List.of(member("10.0.0.1", 80, 1, false))))).isTrue();
		assertThat(base.differsFrom(Membership.of(List.of(member("10.0.0.1", 80, 1, false),
				member("10.0.0.2", 80, 1, false), member("10.0.0.3", 80, 1, false)))))
			.isTrue();
		assertThat(base
			.differsFrom(Membership.of(List.of(member("10.0.0.1", 80, 1, false), member("10.0.0.2", 80, 3, false)))))
			.isTrue();
		assertThat(base
			.differsFrom(Membership.of(List.of(member("10.0.0.1", 80, 1, false), member("10.0.0.2", 80, 1, true)))))
			.isTrue();
	}

	@Test
	void keepsTheBalancerWhenOnlyOtherMetadataChanges() {
		Member plain = member("10.0.0.1", 80, 1, false);
		Member tagged = Member.of(new DefaultServiceInstance("other-id", "svc", "10.0.0.1", 80, false,
				Map.of("weight", "1", "version", "2.1")), 1);
		assertThat(Membership.of(List.of(plain)).differsFrom(Membership.of(List.of(tagged)))).isFalse();
	}

	@Test
	void rebuildsWhenAZoneOrAPriorityChanges() {
		Member plain = member("10.0.0.1", 80, 1, false);
		Member zoned = Member.of(new DefaultServiceInstance("id", "svc", "10.0.0.1", 80, false,
				Map.of("weight", "1", "zone", "eu-west-1b")), 1);
		Member kubernetes = Member.of(new DefaultServiceInstance("id", "svc", "10.0.0.1", 80, false,
				Map.of("weight", "1", "topology.kubernetes.io/zone", "eu-west-1b")), 1);
		Member first = Member.of(new DefaultServiceInstance("id", "svc", "10.0.0.1", 80, false, Map.of()), 1, 0);
		assertThat(zoned.endpoint().zone()).isEqualTo("eu-west-1b");
		assertThat(kubernetes.endpoint()).isEqualTo(zoned.endpoint());
		assertThat(Membership.of(List.of(plain)).differsFrom(Membership.of(List.of(zoned)))).isTrue();
		assertThat(Membership.of(List.of(plain)).differsFrom(Membership.of(List.of(first)))).isTrue();
	}

	@Test
	void namesTheMembersThatLeft() {
		Membership before = Membership.of(List.of(member("10.0.0.1", 80, 1, false), member("10.0.0.2", 80, 1, false)));
		Membership after = Membership.of(List.of(member("10.0.0.2", 80, 1, false), member("10.0.0.3", 80, 1, false)));
		assertThat(before.departedIn(after)).extracting(Member::host).containsExactly("10.0.0.1");
	}

	@Test
	void dropsLaterDuplicatesOfAnAddress() {
		Membership membership = Membership
			.of(List.of(member("10.0.0.1", 80, 3, false), member("10.0.0.1", 80, 1, false)));
		assertThat(membership.members()).singleElement()
			.satisfies((member) -> assertThat(member.endpoint().weight()).isEqualTo(3));
	}

	static Member member(String host, int port, int weight, boolean secure) {
		return Member.of(
				new DefaultServiceInstance(host + ":" + port, "svc", host, port, secure, Map.of("weight", "" + weight)),
				weight);
	}

}
