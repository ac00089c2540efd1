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
	void aPartitionPastItsShareGetsOnlyPlacesNoOtherShareClaims() {
		Partitions partitions = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		int critical = partitions.indexOf("critical");
		int batch = partitions.indexOf("batch");
		partitions.serviceLimit(10);
		// batch's share is 2; critical's 8 are kept for it even while it uses none.
		partitions.acquire(batch);
		partitions.acquire(batch);
		assertThat(partitions.underShare(batch)).isFalse();
		assertThat(partitions.hasSpare(batch)).isFalse();
		// Critical over its share may take what batch does not use of its own.
		Partitions idleBatch = Partitions.of(Map.of("critical", 0.8, "batch", 0.2));
		idleBatch.serviceLimit(10);
		for (int i = 0; i < 8; i++) {
			idleBatch.acquire(critical);
		}
		assertThat(idleBatch.hasSpare(critical)).as("batch's share is claimed, though unused").isFalse();
		Partitions withRest = Partitions.of(Map.of("critical", 0.5));
		withRest.serviceLimit(10);
		for (int i = 0; i < 5; i++) {
			withRest.acquire(0);
		}
		assertThat(withRest.hasSpare(0)).as("the rest's five are kept for it").isFalse();
		withRest.serviceLimit(20);
		assertThat(withRest.hasSpare(0)).as("at a limit of 20").isTrue();
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
