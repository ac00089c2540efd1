package dev.gatewaylb.internal.affinity;

import java.time.Duration;
import java.util.Map;

import dev.gatewaylb.internal.runtime.TestRuntimes;
import dev.gatewaylb.internal.balance.EndpointState;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code affinity-window} job keeps each endpoint's followed requests of the last
 * minute, in steps of five seconds.
 */
class AffinityWindowsTests {

	@Test
	void anEndpointShowsTheRequestsThatFollowedItInTheLastMinute() {
		try (TestRuntimes test = new TestRuntimes(Map.of("gateway.lb.defaults.affinity.cookie", "EP",
				"gateway.lb.defaults.affinity.secret", "0123456789abcdef0123456789abcdef"))) {
			test.instances.add(TestRuntimes.instance("a", 1));
			EndpointState a = test.runtime("svc").snapshot().state(0);
			AffinityState affinity = test.runtime("svc").feature(AffinityState.class);
			for (int i = 0; i < 3; i++) {
				affinity.followed(a);
			}
			seconds(test, 5);
			assertThat(affinity.followedLastMinute(a)).as("after the first step").isEqualTo(3);
			seconds(test, 30);
			affinity.followed(a);
			seconds(test, 5);
			assertThat(affinity.followedLastMinute(a)).isEqualTo(4);
			seconds(test, 20);
			assertThat(affinity.followedLastMinute(a)).as("60 s after the first three").isEqualTo(4);
			seconds(test, 5);
			assertThat(affinity.followedLastMinute(a)).as("65 s after the first three").isEqualTo(1);
			seconds(test, 35);
			assertThat(affinity.followedLastMinute(a)).isZero();
		}
	}

	@Test
	void aServiceWithoutAffinityIsLeftAlone() {
		try (TestRuntimes test = new TestRuntimes(Map.of())) {
			test.instances.add(TestRuntimes.instance("a", 1));
			EndpointState a = test.runtime("svc").snapshot().state(0);
			AffinityState affinity = test.runtime("svc").feature(AffinityState.class);
			affinity.followed(a);
			seconds(test, 10);
			assertThat(affinity.followedLastMinute(a)).isZero();
		}
	}

	/**
	 * Moves the clock on five seconds at a time, so that the job runs at each step.
	 */
	private static void seconds(TestRuntimes test, int seconds) {
		for (int i = 0; i < seconds; i += 5) {
			test.advance(Duration.ofSeconds(5));
		}
	}

}
