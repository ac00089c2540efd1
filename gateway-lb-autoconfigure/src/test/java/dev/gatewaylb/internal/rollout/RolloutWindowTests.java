package dev.gatewaylb.internal.rollout;

import java.util.BitSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One side of a rollout's comparison: each client counts for at most
 * {@code max-outcomes-per-client} answers per interval, and the side counts the distinct
 * clients it heard from.
 */
class RolloutWindowTests {

	private static final long S = 1_000_000_000L;

	@Test
	void aClientCountsForAtMostItsLimitPerInterval() {
		RolloutWindow window = new RolloutWindow(plan(10, 0));
		int[] clients = apart(window, 31);
		for (int i = 0; i < 500; i++) {
			window.failed(clients[0]);
		}
		for (int client = 1; client <= 30; client++) {
			for (int i = 0; i < 3; i++) {
				window.succeeded(clients[client], 5_000_000);
			}
		}
		Rollout.Window counted = drained(window);
		assertThat(counted.requests()).as("10 of the flood, 3 of each other client").isEqualTo(10 + 30 * 3);
		assertThat(counted.errors()).isEqualTo(10);
		assertThat(counted.clients()).isEqualTo(31);
	}

	@Test
	void aHeldStepGivesEachClientItsLimitAgainAndKeepsItsClients() {
		RolloutWindow window = new RolloutWindow(plan(10, 0));
		int[] clients = apart(window, 2);
		for (int i = 0; i < 50; i++) {
			window.succeeded(clients[0], 1_000_000);
			window.succeeded(clients[1], 1_000_000);
		}
		window.nextInterval();
		for (int i = 0; i < 50; i++) {
			window.succeeded(clients[0], 1_000_000);
		}
		Rollout.Window counted = drained(window);
		assertThat(counted.requests()).isEqualTo(10 + 10 + 10);
		assertThat(counted.clients()).as("client 1 heard from in both intervals counts once").isEqualTo(2);
		window.reset();
		assertThat(drained(window)).isEqualTo(new Rollout.Window(0, 0, 0, 0));
		window.succeeded(1, 1_000_000);
		assertThat(drained(window).clients()).as("a new step counts its clients afresh").isEqualTo(1);
	}

	@Test
	void aBodyThatBreaksTurnsItsCountedSuccessIntoAnErrorOfItsClient() {
		RolloutWindow window = new RolloutWindow(plan(10, 0));
		int[] clients = apart(window, 2);
		for (int i = 0; i < 10; i++) {
			assertThat(window.answered(clients[0], 200, 1_000_000)).isTrue();
		}
		assertThat(window.answered(clients[0], 200, 1_000_000)).as("past the client's share").isFalse();
		assertThat(window.answered(clients[1], 503, 1_000_000)).as("an error is no success to judge again").isFalse();
		window.bodyBroke(clients[0]);
		window.bodyBroke(clients[0]);
		Rollout.Window counted = drained(window);
		assertThat(counted.requests()).isEqualTo(11);
		assertThat(counted.errors()).isEqualTo(3);
		assertThat(counted.topClientErrors()).as("client 0's two broken bodies").isEqualTo(2);
		assertThat(counted.topClientRequests()).isEqualTo(10);
	}

	@Test
	void withoutALimitEveryAnswerCountsAndClientsAreStillCounted() {
		RolloutWindow window = new RolloutWindow(plan(0, 0));
		int[] clients = apart(window, 4);
		for (int i = 0; i < 1000; i++) {
			window.answered(clients[i % 4], (i % 10 == 0) ? 500 : 200, 1_000_000);
		}
		Rollout.Window counted = drained(window);
		assertThat(counted.requests()).isEqualTo(1000);
		assertThat(counted.errors()).isEqualTo(100);
		assertThat(counted.clients()).isEqualTo(4);
	}

	@Test
	void similarAddressesSpreadOverTheSlots() {
		// 1,000 IPv4 addresses of one /22, as their hashes are (their 32 bits): a
		// subnet's neighbours must not crowd into a few slots and count as a few
		// clients.
		RolloutWindow window = new RolloutWindow(plan(10, 0));
		int base = (10 << 24) | (1 << 16);
		for (int i = 0; i < 1000; i++) {
			window.succeeded(base + i, 1_000_000);
		}
		// 1,000 keys in 4,096 slots: about 113 pairs collide on average; far fewer
		// distinct slots would mean the mix does not spread.
		assertThat(drained(window).clients()).isGreaterThan(820);
	}

	@Test
	void oneClientRacingOnManyThreadsNeverExceedsItsLimit() throws Exception {
		RolloutWindow window = new RolloutWindow(plan(10, 0));
		int threads = 8;
		int[] clients = apart(window, 1 + threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			Future<?>[] lanes = new Future<?>[threads];
			for (int t = 0; t < threads; t++) {
				int lane = t;
				lanes[t] = pool.submit(() -> {
					start.await();
					for (int i = 0; i < 10_000; i++) {
						window.succeeded(clients[0], 1_000_000);
						window.failed(clients[1 + lane]);
					}
					return null;
				});
			}
			start.countDown();
			for (Future<?> lane : lanes) {
				lane.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		Rollout.Window counted = drained(window);
		assertThat(counted.requests()).as("client 7's 10 and each lane's own client's 10").isEqualTo(10 + threads * 10);
		assertThat(counted.errors()).isEqualTo(threads * 10);
		assertThat(counted.clients()).isEqualTo(1 + threads);
	}

	/**
	 * Returns {@code count} client hashes that land in distinct slots of the window
	 * (whose seed is random): clients that share a slot share its limit, which these
	 * tests do not test.
	 */
	private static int[] apart(RolloutWindow window, int count) {
		int[] clients = new int[count];
		BitSet taken = new BitSet();
		int found = 0;
		for (int candidate = 1; found < count; candidate++) {
			int slot = window.slot(candidate);
			if (!taken.get(slot)) {
				taken.set(slot);
				clients[found++] = candidate;
			}
		}
		return clients;
	}

	private static Rollout.Window drained(RolloutWindow window) {
		window.drain();
		return window.window();
	}

	private static RolloutPlan plan(int maxOutcomesPerClient, int minClients) {
		return new RolloutPlan("canary", new int[] { 50, 100 }, 10 * S, 10, 0.05, 2, null, null, maxOutcomesPerClient,
				minClients);
	}

}
