package dev.gatewaylb.internal.overload.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PartitionsTests {

	@Test
	void aPartitionIsUnderItsShareUntilItHasItAndTheRestHasWhatTheSharesLeave() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.7, "batch", 0.2));
		int critical = partitions.indexOf("critical");
		int batch = partitions.indexOf(new StringBuilder("batch"));
		int rest = partitions.indexOf("other");
		assertThat(partitions.indexOf(null)).isEqualTo(rest);
		assertThat(new int[] { critical, batch, rest }).doesNotHaveDuplicates();
		// Offered requests and admitted none: demands past any share, so no burst
		// allowance (below).
		partitions.refused(critical);
		partitions.refused(rest);
		partitions.serviceLimit(100);
		for (int i = 0; i < 70; i++) {
			assertThat(partitions.underShare(critical)).as("critical with %d in flight", i).isTrue();
			partitions.acquire(critical);
		}
		assertThat(partitions.underShare(critical)).isFalse();
		for (int i = 0; i < 10; i++) {
			assertThat(partitions.underShare(rest)).as("the rest with %d in flight", i).isTrue();
			partitions.acquire(rest);
		}
		assertThat(partitions.underShare(rest)).as("the rest, a tenth of the limit").isFalse();
		assertThat(partitions.report()).extracting(Partitions.Partition::guaranteed).containsExactly(20L, 70L, 10L);
	}

	@Test
	void aPartitionPastItsShareBorrowsOnlyWhileTheServiceIsUnderItsLimit() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		int critical = partitions.indexOf("critical");
		int batch = partitions.indexOf("batch");
		partitions.refused(critical);
		partitions.refused(batch);
		partitions.serviceLimit(10);
		// batch's share is 2: past it, it borrows what critical leaves idle, up to the
		// service's limit.
		for (int i = 0; i < 9; i++) {
			partitions.acquire(batch);
		}
		assertThat(partitions.underShare(batch)).isFalse();
		assertThat(partitions.hasSpare(batch)).as("9 of 10 in flight").isTrue();
		partitions.acquire(batch);
		assertThat(partitions.hasSpare(batch)).as("10 of 10: batch is shed").isFalse();
		// Critical is still under its share of 8, so it goes past the limit: what batch
		// borrowed never keeps it from its share.
		assertThat(partitions.underShare(critical)).isTrue();
		for (int i = 0; i < 8; i++) {
			partitions.acquire(critical);
		}
		assertThat(partitions.underShare(critical)).as("8 of its 8").isFalse();
		assertThat(partitions.hasSpare(critical)).as("critical 8 of 8 against batch 10 of 2: batch goes first")
			.isTrue();
		partitions.acquire(critical);
		partitions.acquire(critical);
		assertThat(partitions.hasSpare(critical)).as("critical 10 of 8 against batch 10 of 2").isTrue();
		for (int i = 0; i < 8; i++) {
			partitions.release(batch);
		}
		assertThat(partitions.hasSpare(critical)).as("critical 10 of 8 against batch 2 of 2, 12 of 10 in flight")
			.isFalse();
		assertThat(partitions.hasSpare(batch)).as("batch, critical being further past its share").isTrue();
		Partitions withRest = Partitions.of(Map.of("critical", 1.0));
		withRest.serviceLimit(10);
		int rest = withRest.indexOf(null);
		assertThat(withRest.underShare(rest)).as("the rest has no share").isFalse();
		assertThat(withRest.hasSpare(rest)).as("but an idle service admits it").isTrue();
	}

	@Test
	void aPartitionWhoseDemandFitsItsShareIsOwedABurstAllowanceAndOneHeldAtItsShareBySheddingIsNot() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		int critical = partitions.indexOf("critical");
		int batch = partitions.indexOf("batch");
		partitions.serviceLimit(18);
		// critical's share of 18 is 15, and its demand (none yet) fits it: 15 plus
		// 3 x sqrt(15) (11.6), 27 places.
		acquire(partitions, critical, 26);
		assertThat(partitions.underShare(critical)).as("26 of 27").isTrue();
		partitions.acquire(critical);
		assertThat(partitions.underShare(critical)).as("27 of 27").isFalse();
		// Three seconds at 27 in flight, a quarter of its requests refused: a demand of
		// about 35, past its share and allowance (27).
		for (int tick = 0; tick < 30; tick++) {
			for (int i = 0; i < 90; i++) {
				partitions.acquire(critical);
				partitions.release(critical);
			}
			for (int i = 0; i < 30; i++) {
				partitions.refused(critical);
			}
			partitions.serviceLimit(18);
		}
		assertThat(owed(partitions, critical)).as("a demand past its share and allowance: its share only")
			.isEqualTo(15);
		release(partitions, critical, 27);
		// batch (share 4) held at 4 in flight by shedding: each tick 20 admitted, 60
		// refused. Its load, 4, fits its share; its demand, 16, does not.
		acquire(partitions, batch, 4);
		for (int tick = 0; tick < 30; tick++) {
			for (int i = 0; i < 20; i++) {
				partitions.acquire(batch);
				partitions.release(batch);
			}
			for (int i = 0; i < 60; i++) {
				partitions.refused(batch);
			}
			partitions.serviceLimit(18);
		}
		assertThat(partitions.underShare(batch)).as("4 of its share of 4, no allowance").isFalse();
		assertThat(owed(partitions, batch)).isEqualTo(4);
		// Then its load falls to 3 and nothing of it is refused.
		partitions.release(batch);
		for (int tick = 0; tick < 60; tick++) {
			for (int i = 0; i < 20; i++) {
				partitions.acquire(batch);
				partitions.release(batch);
			}
			partitions.serviceLimit(18);
		}
		partitions.acquire(batch);
		assertThat(partitions.underShare(batch)).as("a demand of 3: 4 of 4 + 6").isTrue();
		assertThat(partitions.hasSpare(critical)).as("batch within its allowance is not past what it is owed").isTrue();
	}

	@Test
	void aPartitionWhoseShareADipOfTheLimitTakesUnderItsDemandKeepsItsAllowanceUntilTwiceItsShare() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		int critical = partitions.indexOf("critical");
		// critical carries 13 requests in flight, all admitted, against a limit of 18:
		// its share is 15, which its demand fits, so it is owed 15 + 12.
		acquire(partitions, critical, 13);
		for (int tick = 0; tick < 60; tick++) {
			partitions.serviceLimit(18);
		}
		assertThat(owed(partitions, critical)).isEqualTo(27);
		// The limit dips to 12: its share is 10 (allowance 10), under its demand of 13,
		// which the share and allowance still cover: it keeps the allowance rather than
		// being held at 10 for the dip.
		partitions.serviceLimit(12);
		assertThat(owed(partitions, critical)).isEqualTo(20);
		assertThat(partitions.underShare(critical)).as("13 of 20").isTrue();
		// To 6: its share is 5 (allowance 7), and a demand of 13 is past twice that
		// share.
		partitions.serviceLimit(6);
		assertThat(owed(partitions, critical)).isEqualTo(5);
		assertThat(partitions.underShare(critical)).as("13 of 5").isFalse();
		partitions.serviceLimit(18);
		assertThat(owed(partitions, critical)).as("the limit back").isEqualTo(27);
	}

	@Test
	void aPartitionOfAShareOfOnePlaceIsOwedItsAllowanceUpToADemandOfTwo() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		int batch = partitions.indexOf("batch");
		// A limit of 3, one place for batch, whose allowance is 3; three batch requests
		// held, all admitted (OverloadIT's partition test): a demand of 3, within share
		// and allowance (4), but three times its share: its share only.
		acquire(partitions, batch, 3);
		for (int tick = 0; tick < 60; tick++) {
			partitions.serviceLimit(3);
		}
		assertThat(owed(partitions, batch)).isEqualTo(1);
		// Down to one in flight: a demand of 1, under twice its share.
		release(partitions, batch, 2);
		for (int tick = 0; tick < 60; tick++) {
			partitions.serviceLimit(3);
		}
		assertThat(owed(partitions, batch)).isEqualTo(4);
	}

	@Test
	void aClientHoldsAtMostItsShareOfTheWaitQueueAndIsForgottenWithItsLastWaiter() {
		Partitions partitions = Partitions.of(Map.of());
		int rest = partitions.indexOf(null);
		partitions.serviceLimit(20);
		// A tenth of a queue of 20: 2 per client.
		Partitions.Waiter first = partitions.await(rest, false, "a", 0.1, () -> {
		});
		assertThat(partitions.await(rest, false, "a", 0.1, () -> {
		})).isNotNull();
		assertThat(partitions.await(rest, false, "a", 0.1, () -> {
		})).as("a's third").isNull();
		assertThat(partitions.await(rest, false, "b", 0.1, () -> {
		})).as("b's first").isNotNull();
		assertThat(partitions.waiting("a")).isEqualTo(2);
		assertThat(partitions.waiting()).isEqualTo(3);
		assertThat(partitions.cancel(first)).isTrue();
		assertThat(partitions.await(rest, false, "a", 0.1, () -> {
		})).as("a's second again").isNotNull();
		assertThat(partitions.await(rest, true, "a", 0.1, () -> {
		})).as("a woken waiter that lost its place rejoins past the bound").isNotNull();
		for (int i = 0; i < 4; i++) {
			partitions.wakeOne();
			partitions.handOverTaken();
		}
		assertThat(partitions.waiting()).isZero();
		assertThat(partitions.waiting("a")).as("forgotten").isZero();
		assertThat(partitions.waiting("b")).isZero();
		assertThat(partitions.await(rest, false, "c", 0.01, () -> {
		})).as("never fewer than one each").isNotNull();
	}

	@Test
	void everythingIsUnderItsShareBeforeTheFirstLimitIsKnown() {
		Partitions partitions = Partitions.of(Map.of("a", 0.5));
		partitions.acquire(0);
		assertThat(partitions.underShare(0)).isTrue();
		assertThat(partitions.hasSpare(0)).isTrue();
		partitions.release(0);
		assertThat(partitions.report().get(0).inFlight()).isZero();
	}

	@Test
	void aFreedPlaceWakesTheWaiterOfThePartitionFurthestUnderItsShareFirstComeFirstServed() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		int critical = partitions.indexOf("critical");
		int batch = partitions.indexOf("batch");
		partitions.serviceLimit(10);
		// critical 8 of its 8, batch 2 of its 2: equal use; then one critical ends.
		acquire(partitions, critical, 8);
		acquire(partitions, batch, 2);
		List<String> woken = new ArrayList<>();
		partitions.await(batch, false, null, 1.0, picks(partitions, () -> woken.add("batch-1")));
		partitions.await(critical, false, null, 1.0, picks(partitions, () -> woken.add("critical-1")));
		partitions.await(critical, false, null, 1.0, picks(partitions, () -> woken.add("critical-2")));
		assertThat(partitions.waiting()).isEqualTo(3);
		partitions.release(critical);
		partitions.wakeOne();
		assertThat(woken).as("critical at 7 of 8 against batch at 2 of 2").containsExactly("critical-1");
		partitions.acquire(critical);
		partitions.release(batch);
		partitions.wakeOne();
		assertThat(woken).as("batch at 1 of 2 against critical at 8 of 8").containsExactly("critical-1", "batch-1");
		partitions.wakeOne();
		assertThat(woken).containsExactly("critical-1", "batch-1", "critical-2");
		partitions.wakeOne();
		assertThat(woken).as("nobody left to wake").hasSize(3);
		assertThat(partitions.waiting()).isZero();
	}

	@Test
	void aCancelledWaiterIsNeverWokenAndAWokenOneCannotBeCancelled() {
		Partitions partitions = Partitions.of(Map.of());
		int rest = partitions.indexOf(null);
		partitions.serviceLimit(4);
		AtomicInteger wakes = new AtomicInteger();
		Partitions.Waiter first = partitions.await(rest, false, null, 1.0, picks(partitions, wakes::incrementAndGet));
		Partitions.Waiter second = partitions.await(rest, false, null, 1.0, picks(partitions, wakes::incrementAndGet));
		assertThat(first).isNotNull();
		assertThat(second).isNotNull();
		assertThat(partitions.cancel(first)).isTrue();
		assertThat(partitions.cancel(first)).as("cancelled once").isFalse();
		partitions.wakeOne();
		assertThat(wakes).hasValue(1);
		assertThat(partitions.cancel(second)).as("already woken").isFalse();
		partitions.wakeOne();
		assertThat(wakes).hasValue(1);
		assertThat(partitions.waiting()).isZero();
	}

	@Test
	void aWaiterThatLostItsPlaceGoesBackToTheHeadOfItsQueuePastTheBound() {
		Partitions partitions = Partitions.of(Map.of());
		int rest = partitions.indexOf(null);
		partitions.serviceLimit(1);
		List<String> woken = new ArrayList<>();
		assertThat(partitions.await(rest, false, null, 1.0, () -> woken.add("first"))).isNotNull();
		assertThat(partitions.await(rest, false, null, 1.0, () -> woken.add("second"))).as("past the bound of 1")
			.isNull();
		partitions.wakeOne();
		// "first" lost the place to a request that never waited, and a newcomer queued.
		assertThat(partitions.await(rest, false, null, 1.0, () -> woken.add("newcomer"))).isNotNull();
		assertThat(partitions.await(rest, true, null, 1.0, () -> woken.add("first again"))).as("it had its turn")
			.isNotNull();
		partitions.wakeOne();
		partitions.wakeOne();
		assertThat(woken).containsExactly("first", "first again", "newcomer");
	}

	@Test
	void atMostAPartitionsShareOfTheLimitWaits() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		int critical = partitions.indexOf("critical");
		int batch = partitions.indexOf("batch");
		int rest = partitions.indexOf(null);
		partitions.serviceLimit(10);
		for (int i = 0; i < 2; i++) {
			assertThat(partitions.await(batch, false, null, 1.0, () -> {
			})).as("batch waiter %d of its 2", i + 1).isNotNull();
		}
		assertThat(partitions.await(batch, false, null, 1.0, () -> {
		})).as("a third batch waiter").isNull();
		for (int i = 0; i < 8; i++) {
			assertThat(partitions.await(critical, false, null, 1.0, () -> {
			})).as("critical waiter %d of its 8", i + 1).isNotNull();
		}
		assertThat(partitions.await(critical, false, null, 1.0, () -> {
		})).isNull();
		assertThat(partitions.await(rest, false, null, 1.0, () -> {
		})).as("the rest, no share: one").isNotNull();
		assertThat(partitions.await(rest, false, null, 1.0, () -> {
		})).isNull();
		assertThat(partitions.waiting()).isEqualTo(11);
	}

	@Test
	void racingReleasesAndCancelsWakeEachWaiterAtMostOnceAndLeaveNoneCounted() throws Exception {
		Partitions partitions = Partitions.of(Map.of("critical", 0.5));
		partitions.serviceLimit(1_000);
		int threads = 8;
		int perThread = 2_000;
		AtomicInteger woken = new AtomicInteger();
		AtomicInteger cancelled = new AtomicInteger();
		AtomicInteger twice = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int seed = t;
				done.add(pool.submit(() -> {
					java.util.Random random = new java.util.Random(seed);
					for (int i = 0; i < perThread; i++) {
						AtomicInteger wakes = new AtomicInteger();
						Partitions.Waiter waiter = partitions.await(random.nextInt(2), random.nextBoolean(), null, 1.0,
								() -> {
									if (wakes.incrementAndGet() > 1) {
										twice.incrementAndGet();
									}
									woken.incrementAndGet();
									partitions.handOverTaken();
								});
						if (waiter == null) {
							continue;
						}
						if (random.nextBoolean() && partitions.cancel(waiter)) {
							cancelled.incrementAndGet();
						}
						partitions.wakeOne();
					}
				}));
			}
			for (Future<?> future : done) {
				future.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		// Bounded: a count that drifted fails below rather than hangs here.
		for (int i = 0; i < threads * perThread && partitions.waiting() > 0; i++) {
			partitions.wakeOne();
		}
		assertThat(twice).hasValue(0);
		assertThat(woken.get() + cancelled.get()).as("each waiter woken or cancelled").isEqualTo(threads * perThread);
		assertThat(partitions.waiting()).isZero();
	}

	@Test
	void aWokenWaiterIsCountedAsWaitingUntilItHasPicked() {
		Partitions partitions = Partitions.of(Map.of());
		int rest = partitions.indexOf(null);
		partitions.serviceLimit(4);
		assertThat(partitions.await(rest, false, null, 1.0, () -> {
		})).isNotNull();
		partitions.wakeOne();
		assertThat(partitions.waiting()).as("woken, its pick still to come: newcomers hold back").isEqualTo(1);
		partitions.wakeOne();
		partitions.handOverTaken();
		assertThat(partitions.waiting()).isZero();
	}

	@Test
	void aLimitThatRisesWakesAsManyWaitersAsPlacesItAdds() {
		Partitions partitions = Partitions.of(Map.of());
		int rest = partitions.indexOf(null);
		partitions.serviceLimit(4);
		List<String> woken = new ArrayList<>();
		for (String name : List.of("a", "b", "c")) {
			assertThat(partitions.await(rest, false, null, 1.0, picks(partitions, () -> woken.add(name)))).isNotNull();
		}
		partitions.serviceLimit(4);
		partitions.serviceLimit(3);
		assertThat(woken).as("the same limit, or a lower one").isEmpty();
		partitions.serviceLimit(5);
		assertThat(woken).containsExactly("a", "b");
		assertThat(partitions.waiting()).isEqualTo(1);
	}

	/**
	 * A wake that picks at once, as a woken request does.
	 */
	private static Runnable picks(Partitions partitions, Runnable wake) {
		return () -> {
			wake.run();
			partitions.handOverTaken();
		};
	}

	private static long owed(Partitions partitions, int index) {
		return partitions.report().get(index).owed();
	}

	private static void acquire(Partitions partitions, int index, int count) {
		for (int i = 0; i < count; i++) {
			partitions.acquire(index);
		}
	}

	private static void release(Partitions partitions, int partition, int count) {
		for (int i = 0; i < count; i++) {
			partitions.release(partition);
		}
	}

}
