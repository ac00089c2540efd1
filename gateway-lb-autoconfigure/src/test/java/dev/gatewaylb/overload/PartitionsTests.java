package dev.gatewaylb.overload;

import java.util.Map;

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
	void everythingIsUnderItsShareBeforeTheFirstLimitIsKnown() {
		Partitions partitions = Partitions.of(Map.of("a", 0.5));
		partitions.acquire(0);
		assertThat(partitions.underShare(0)).isTrue();
		assertThat(partitions.hasSpare(0)).isTrue();
		partitions.release(0);
		assertThat(partitions.report().get(0).inFlight()).isZero();
	}

}
